"""Authorization flags (k8s.io/kubernetes/pkg/kubeapiserver/options/authorization.go).

All of kube-apiserver's modes are accepted by the parser, but validate() rejects the ones this server
does not implement yet: add a mode to IMPLEMENTED_MODES once its authorizer exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kube_apiserver.apimachinery.gostrconv import quote_list
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

IMPLEMENTED_MODES = {MODE_ALWAYS_ALLOW, MODE_ALWAYS_DENY, MODE_RBAC}


@dataclass
class BuiltInAuthorizationOptions:
    modes: list[str] = field(default_factory=list)

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_slice_var(
            self,
            "modes",
            "authorization-mode",
            "Ordered list of plug-ins to do authorization on secure port. Defaults to AlwaysAllow. "
            "Comma-delimited list of: " + ",".join(AUTHORIZATION_MODE_CHOICES) + ".",
        )

    def complete(self) -> None:
        if not self.modes:
            self.modes = [MODE_ALWAYS_ALLOW]

    def validate(self) -> list[str]:
        errors: list[str] = []
        if not self.modes:
            errors.append("at least one authorization-mode must be passed")
        for mode in self.modes:
            errors.extend(_mode_errors(mode))
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
