"""API enablement flags (k8s.io/apiserver/pkg/server/options/api_enablement.go)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kube_apiserver.apimachinery import gostrconv
from kube_apiserver.cli.flagset import FlagSet
from kube_apiserver.cli.values import ConfigurationMapValue

API_ALL = "api/all"

_RUNTIME_CONFIG_HELP = (
    "A set of key=value pairs that enable or disable built-in APIs. Supported options are:\n"
    "v1=true|false for the core API group\n"
    "<group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true)\n"
    "api/all=true|false controls all API versions\n"
    "api/ga=true|false controls all API versions of the form v[0-9]+\n"
    "api/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+\n"
    "api/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+\n"
    "api/legacy is deprecated, and will be removed in a future version"
)


@dataclass
class APIEnablementOptions:
    runtime_config: dict[str, str] = field(default_factory=dict)

    def add_flags(self, fs: FlagSet) -> None:
        fs.var(ConfigurationMapValue(self, "runtime_config"), "runtime-config", _RUNTIME_CONFIG_HELP)

    def enabled_overrides(self) -> dict[str, bool]:
        """--runtime-config as booleans (a bare key means true); call after validate()."""
        return {key: gostrconv.parse_bool(value or "true") for key, value in self.runtime_config.items()}

    def validate(self) -> list[str]:
        if self.runtime_config == {API_ALL: "false"}:
            return [f"invalid runtime-config with only {API_ALL}=false"]
        errors = []
        for key, value in sorted(self.runtime_config.items()):
            try:
                gostrconv.parse_bool(value or "true")
            except ValueError as err:
                errors.append(f"invalid value of {key}: {value}, err: {err}")
        return errors
