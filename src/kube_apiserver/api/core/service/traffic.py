"""The Service fields about how traffic reaches it (pkg/apis/core/validation, v1.34): session affinity,
load balancer source ranges and class, external and internal traffic policies, traffic distribution."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .clusterips import spec_of
from .types import externally_accessible, needs_health_check

Object = dict[str, Any]
SPEC = Path("spec")
AFFINITIES = ("ClientIP", "None")
MAX_AFFINITY_SECONDS = 86400
EXTERNAL_POLICIES = ("Cluster", "Local")
INTERNAL_POLICIES = ("Cluster", "Local")
DISTRIBUTIONS = ("PreferClose", "PreferSameZone", "PreferSameNode")
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
LB_ONLY = "may only be used when `type` is 'LoadBalancer'"


def _client_ip_config(config: Any, path: Path) -> ErrorList:
    """validateClientIPAffinityConfig."""
    when = "when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [field.required(path, when)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [field.required(path.child("clientIP"), when)]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [field.required(path.child("clientIP", "timeoutSeconds"), when)]
    if timeout <= 0 or timeout > MAX_AFFINITY_SECONDS:
        return [field.invalid(path.child("clientIP", "timeoutSeconds"), timeout,
                              f"must be greater than 0 and less than {MAX_AFFINITY_SECONDS}")]
    return []


def validate_affinity(spec: Object) -> ErrorList:
    affinity = spec.get("sessionAffinity") or ""
    path = SPEC.child("sessionAffinity")
    errs: ErrorList = []
    if not affinity:
        errs.append(field.required(path, ""))
    elif affinity not in AFFINITIES:
        errs.append(field.not_supported(path, affinity, AFFINITIES))
    config_path = SPEC.child("sessionAffinityConfig")
    if affinity == "ClientIP":
        errs += _client_ip_config(spec.get("sessionAffinityConfig"), config_path)
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(field.forbidden(config_path, "must not be set when session affinity is None"))
    return errs


def validate_source_ranges(svc: Object) -> ErrorList:
    """The loadBalancerSourceRanges field, or else its annotation: LoadBalancer only, CIDRs."""
    spec = spec_of(svc)
    is_lb = spec.get("type") == "LoadBalancer"
    ranges = spec.get("loadBalancerSourceRanges") or []
    if ranges:
        path = SPEC.child("LoadBalancerSourceRanges")
        errs = [] if is_lb else [field.forbidden(path, LB_ONLY)]
        for i, value in enumerate(ranges):
            errs += validation.is_valid_cidr(path.index(i), value.strip())
        return errs
    annotations = (svc.get("metadata") or {}).get("annotations") or {}
    if SOURCE_RANGES_ANNOTATION not in annotations:
        return []
    path = Path("metadata", "annotations").key(SOURCE_RANGES_ANNOTATION)
    errs = [] if is_lb else [field.forbidden(path, LB_ONLY)]
    value = annotations[SOURCE_RANGES_ANNOTATION].strip()
    for cidr in value.split(",") if value else []:
        errs += validation.is_valid_cidr(path, cidr.strip())
    return errs


def validate_load_balancer_class(old: Object | None, svc: Object) -> ErrorList:
    """validateLoadBalancerClassField: LoadBalancer only, a qualified name, fixed once set."""
    path = SPEC.child("loadBalancerClass")
    value = spec_of(svc).get("loadBalancerClass")
    is_lb = spec_of(svc).get("type") == "LoadBalancer"
    errs: ErrorList = []
    if old is not None and is_lb and spec_of(old).get("type") == "LoadBalancer" and \
            spec_of(old).get("loadBalancerClass") != value:
        errs.append(field.invalid(path, value, "may not change once set"))
    if value is None:
        return errs
    if not is_lb:
        return errs + [field.forbidden(path, LB_ONLY)]
    return errs + [field.invalid(path, value, msg) for msg in validation.is_qualified_name(value)]


def validate_external_traffic_policy(svc: Object) -> ErrorList:
    """validateServiceExternalTrafficPolicy, with the health check node port it implies."""
    spec = spec_of(svc)
    policy = spec.get("externalTrafficPolicy") or ""
    path = SPEC.child("externalTrafficPolicy")
    errs: ErrorList = []
    if not externally_accessible(svc):
        if policy:
            errs.append(field.invalid(path, policy, "may only be set for externally-accessible services"))
    elif not policy:
        errs.append(field.required(path, ""))
    elif policy not in EXTERNAL_POLICIES:
        errs.append(field.not_supported(path, policy, EXTERNAL_POLICIES))
    port = spec.get("healthCheckNodePort") or 0
    hc_path = SPEC.child("healthCheckNodePort")
    if not needs_health_check(svc):
        if port:
            errs.append(field.invalid(hc_path, port, "may only be set when `type` is 'LoadBalancer' and "
                                                     "`externalTrafficPolicy` is 'Local'"))
    elif not port:
        errs.append(field.required(hc_path, ""))
    else:
        errs += [field.invalid(hc_path, port, msg) for msg in validation.is_valid_port_num(port)]
    return errs


def validate_internal_traffic_policy(spec: Object) -> ErrorList:
    policy = spec.get("internalTrafficPolicy")
    path = SPEC.child("internalTrafficPolicy")
    if policy is None:
        if spec.get("type") in ("NodePort", "LoadBalancer", "ClusterIP"):
            return [field.required(path, "")]
        return []
    if policy not in INTERNAL_POLICIES:
        return [field.not_supported(path, policy, INTERNAL_POLICIES)]
    return []


def validate_traffic_distribution(spec: Object) -> ErrorList:
    value = spec.get("trafficDistribution")
    if value is None or value in DISTRIBUTIONS:
        return []
    return [field.not_supported(SPEC.child("trafficDistribution"), value, DISTRIBUTIONS)]
