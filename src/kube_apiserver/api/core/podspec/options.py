"""PodValidationOptions (pkg/apis/core/validation) with the values kube-apiserver v1.34 uses, and the
cluster capability that decides whether privileged containers are allowed (--allow-privileged)."""

from __future__ import annotations

from dataclasses import dataclass

_capabilities = {"allow_privileged": False}


def set_allow_privileged(allowed: bool) -> None:
    """capabilities.Setup: kube-apiserver's --allow-privileged (false by default)."""
    _capabilities["allow_privileged"] = allowed


def allow_privileged() -> bool:
    return _capabilities["allow_privileged"]


@dataclass(frozen=True)
class PodValidationOptions:
    # The object being validated is a Pod, not a PodSpec embedded in a template.
    resource_is_pod: bool = False
    allow_invalid_label_value_in_selector: bool = False
    allow_invalid_topology_spread_constraint_label_selector: bool = False
    allow_invalid_label_value_in_required_node_affinity: bool = False
    # Relaxed environment variable names are GA in v1.34.
    allow_relaxed_environment_variable_validation: bool = True
    allow_relaxed_dns_search_validation: bool = True
    allow_pod_lifecycle_sleep_action_zero_value: bool = True
    allow_sidecar_resize_policy: bool = True
    allow_indivisible_huge_pages_values: bool = False
    allow_namespaced_sysctls_for_host_net_and_host_ipc: bool = False
    allow_non_local_projected_token_path: bool = False
    pod_level_resources_enabled: bool = True
