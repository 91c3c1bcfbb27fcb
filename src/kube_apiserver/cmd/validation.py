"""kube-apiserver's own option checks (cmd/kube-apiserver/app/options/validation.go)."""

from __future__ import annotations

import ipaddress

from kube_apiserver.cmd.service_ip import IPNetwork, ServiceIPRanges

MAX_CIDR_BITS = 20  # service ranges are allocated from a bitmap: keep them small


def _validate_max_cidr_range(cidr: IPNetwork, flag: str) -> list[str]:
    bits = cidr.max_prefixlen
    if bits - cidr.prefixlen > MAX_CIDR_BITS:
        return [
            f"specified {flag} is too large; for {bits}-bit addresses, the mask must be >= {bits - MAX_CIDR_BITS}"
        ]
    return []


def validate_cluster_ip_flags(ranges: ServiceIPRanges) -> list[str]:
    errors: list[str] = []
    if ranges.primary is None and not ranges.errors:
        errors.append("--service-cluster-ip-range must contain at least one valid cidr")
    if ranges.entries > 2:
        errors.append("--service-cluster-ip-range must not contain more than two entries")
    if ranges.primary is not None:
        errors += _validate_max_cidr_range(ranges.primary, "--service-cluster-ip-range")
    if ranges.primary is not None and ranges.secondary is not None:
        if ranges.primary.version == ranges.secondary.version:
            errors.append(
                "--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family"
            )
        errors += _validate_max_cidr_range(ranges.secondary, "--service-cluster-ip-range[1]")
    return errors


def validate_public_ip_service_cluster_ip_range_ip_families(
    ranges: ServiceIPRanges, advertise_address: str | None
) -> list[str]:
    """The kubernetes.default Service and its endpoints (the advertise address) must share a family."""
    if ranges.primary is None or not advertise_address:
        return []
    if ranges.primary.version != ipaddress.ip_address(advertise_address).version:
        return [
            f'service IP family "{ranges.primary}" must match public address family "{advertise_address}"'
        ]
    return []


ENDPOINT_RECONCILER_TYPES = ("master-count", "lease", "none")


def validate_endpoint_reconciler(reconciler_type: str, apiserver_count: int) -> list[str]:
    """--apiserver-count is checked for master-count (its message); an unknown type is refused here, where
    kube-apiserver ends at start with "Reconciler not implemented"."""
    if reconciler_type not in ENDPOINT_RECONCILER_TYPES:
        return [f"Reconciler not implemented: {reconciler_type}"]
    if reconciler_type == "master-count" and apiserver_count <= 0:
        return [f"--apiserver-count should be a positive number, but value '{apiserver_count}' provided"]
    return []


APF_RUNTIME_CONFIGS = ("flowcontrol.apiserver.k8s.io/v1", "api/ga", "api/all")  # in the order of precedence


def validate_api_priority_and_fairness(enabled: bool, runtime_config: dict[str, str]) -> list[str]:
    """validateAPIPriorityAndFairness: the APF controller reads flowcontrol/v1, so it must stay served; the
    --runtime-config map is read as Go prints it (sorted key=value pairs joined by commas)."""
    if not enabled:
        return []
    printed = ",".join(sorted(f"{key}={value}" for key, value in runtime_config.items()))
    for config in APF_RUNTIME_CONFIGS:
        if f"{config}=false" in printed:
            return [f"--runtime-config={config}=false conflicts with --enable-priority-and-fairness=true"]
        if f"{config}=true" in printed:
            return []
    return []
