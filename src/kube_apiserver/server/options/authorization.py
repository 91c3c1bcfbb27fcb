"""Authorization flags (k8s.io/kubernetes/pkg/kubeapiserver/options/authorization.go).

All of kube-apiserver's modes are accepted by the parser, but validate() rejects the ones this server
does not implement yet: add a mode to IMPLEMENTED_MODES once its authorizer exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kube_apiserver.apimachinery.gostrconv import quote_list
from kube_apiserver.authorization.config import AuthorizationConfiguration, ConfigError, from_flags, load_file
from kube_apiserver.cli.flagset import FlagSet

MODE_ALWAYS_ALLOW = "AlwaysAllow"
MODE_ALWAYS_DENY = "AlwaysDeny"
MODE_ABAC = "ABAC"
MODE_WEBHOOK = "Webhook"
MODE_RBAC = "RBAC"
MODE_NODE = "Node"

# kube-apiserver's AuthorizationModeChoices, in its order.
AUTHORIZATION_MODE_CHOICES = (
    MODE_ALWAYS_ALLOW,
    MODE_ALWAYS_DENY,
    MODE_ABAC,
    MODE_WEBHOOK,
    MODE_RBAC,
    MODE_NODE,
)

IMPLEMENTED_MODES = {MODE_ALWAYS_ALLOW, MODE_ALWAYS_DENY, MODE_RBAC, MODE_WEBHOOK, MODE_NODE}


@dataclass
class BuiltInAuthorizationOptions:
    modes: list[str] = field(default_factory=list)
    webhook_config_file: str = ""
    webhook_version: str = "v1beta1"
    webhook_cache_authorized_ttl: float = 300.0
    webhook_cache_unauthorized_ttl: float = 30.0
    config_file: str = ""  # --authorization-config

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_slice_var(
            self,
            "modes",
            "authorization-mode",
            "Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow if "
            "--authorization-config is not used. "
            "Comma-delimited list of: " + ",".join(AUTHORIZATION_MODE_CHOICES) + ".",
        )

        fs.string_var(self, "webhook_config_file", "authorization-webhook-config-file",
                      "File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. "
                      "The API server will query the remote service to determine access on the API server's secure "
                      "port.")
        fs.string_var(self, "webhook_version", "authorization-webhook-version",
                      "The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from "
                      "the webhook.")
        fs.duration_var(self, "webhook_cache_authorized_ttl", "authorization-webhook-cache-authorized-ttl",
                        "The duration to cache 'authorized' responses from the webhook authorizer.")
        fs.duration_var(self, "webhook_cache_unauthorized_ttl", "authorization-webhook-cache-unauthorized-ttl",
                        "The duration to cache 'unauthorized' responses from the webhook authorizer.")

        fs.string_var(self, "config_file", "authorization-config",
                      "File with Authorization Configuration to configure the authorizer chain. Requires feature "
                      "gate StructuredAuthorizationConfiguration. This flag is mutually exclusive with the other "
                      "--authorization-mode and --authorization-webhook-* flags.")

    def legacy_flags_set(self) -> bool:
        """Whether --authorization-mode or an --authorization-webhook-* flag was given (told from its value)."""
        defaults = BuiltInAuthorizationOptions()
        return bool(self.modes) or any(getattr(self, name) != getattr(defaults, name) for name in (
            "webhook_config_file", "webhook_version", "webhook_cache_authorized_ttl",
            "webhook_cache_unauthorized_ttl"))

    def configuration(self) -> AuthorizationConfiguration:
        """The chain: the file's, or the one the legacy flags describe (validate() has passed)."""
        if self.config_file:
            return load_file(self.config_file)
        return from_flags(self.modes, self.webhook_config_file, self.webhook_version,
                          self.webhook_cache_authorized_ttl, self.webhook_cache_unauthorized_ttl)

    def types(self) -> list[str]:
        try:
            return [spec.type for spec in self.configuration().authorizers]
        except ConfigError:
            return []

    def complete(self) -> None:
        if self.config_file:
            return
        if not self.modes:
            self.modes = [MODE_ALWAYS_ALLOW]

    def validate(self) -> list[str]:
        if self.config_file:
            if self.legacy_flags_set():
                return ["--authorization-config can not be specified when --authorization-mode or "
                        "--authorization-webhook-* flags are defined"]
            try:
                load_file(self.config_file)
            except ConfigError as err:
                return [str(err)]
            return []
        errors: list[str] = []
        if not self.modes:
            errors.append("at least one authorization-mode must be passed")
        for mode in self.modes:
            errors.extend(_mode_errors(mode))
        if MODE_WEBHOOK in self.modes and not self.webhook_config_file:
            errors.append("authorization-mode Webhook's authorization config file not passed")
        if self.webhook_config_file and MODE_WEBHOOK not in self.modes:
            errors.append("cannot specify --authorization-webhook-config-file without mode Webhook")
        if self.webhook_version not in ("v1", "v1beta1"):
            errors.append(f'unsupported authorization-webhook-version "{self.webhook_version}"')
        if len(self.modes) != len(set(self.modes)):
            errors.append(f"authorization-mode {quote_list(self.modes)} has mode specified more than once")
        return errors


def _mode_errors(mode: str) -> list[str]:
    if mode not in AUTHORIZATION_MODE_CHOICES:
        return [f'authorization-mode "{mode}" is not a valid mode']
    if mode not in IMPLEMENTED_MODES:
        implemented = ", ".join(m for m in AUTHORIZATION_MODE_CHOICES if m in IMPLEMENTED_MODES)
        return [
            f'authorization-mode "{mode}" is not implemented by this server yet (implemented: {implemented})'
        ]
    return []
