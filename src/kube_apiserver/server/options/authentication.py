"""Authentication flags (k8s.io/kubernetes/pkg/kubeapiserver/options/authentication.go, the subset this
server implements: anonymous requests, static token file, client certificates)."""

from __future__ import annotations

from dataclasses import dataclass

from kube_apiserver import logs
from kube_apiserver.cli.flagset import FlagSet
from kube_apiserver.cli.gofile import read_error
from kube_apiserver.server import certs


@dataclass
class BuiltInAuthenticationOptions:
    anonymous: bool = True
    client_ca_file: str = ""
    token_auth_file: str = ""
    anonymous_public_paths_only: bool = False

    def add_flags(self, fs: FlagSet) -> None:
        fs.bool_var(self, "anonymous", "anonymous-auth", _ANONYMOUS_HELP)
        fs.string_var(self, "client_ca_file", "client-ca-file", _CLIENT_CA_HELP)
        fs.string_var(
            self,
            "token_auth_file",
            "token-auth-file",
            "If set, the file that will be used to secure the secure port of the API server via token "
            "authentication.",
        )

    def apply_authorization(self, authorization_modes: list[str]) -> None:
        """kube-apiserver turns anonymous auth off when the AlwaysAllow authorizer is in use, since it would
        grant everything to everyone. We keep it on only for the paths Kubernetes leaves open (health and
        version, as AuthenticationConfiguration's anonymous conditions do), so probes still work."""
        self.anonymous_public_paths_only = "AlwaysAllow" in authorization_modes
        if self.anonymous and self.anonymous_public_paths_only:
            logs.info_v(1, "AlwaysAllow authorizer: anonymous requests are limited to /healthz, /livez, "
                           "/readyz and /version")

    def validate(self) -> list[str]:
        errors: list[str] = []
        if self.token_auth_file:
            error = read_error(self.token_auth_file)
            if error:
                errors.append(f"unable to load --token-auth-file: {error}")
        if self.client_ca_file:
            error = certs.ca_bundle_error(self.client_ca_file)
            if error:
                errors.append(f"unable to load client CA file: {error}")
        return errors


_ANONYMOUS_HELP = (
    "Enables anonymous requests to the secure port of the API server. Requests that are not rejected by "
    "another authentication method are treated as anonymous requests. Anonymous requests have a username "
    "of system:anonymous, and a group name of system:unauthenticated."
)
_CLIENT_CA_HELP = (
    "If set, any request presenting a client certificate signed by one of the authorities in the "
    "client-ca-file is authenticated with an identity corresponding to the CommonName of the client "
    "certificate."
)
