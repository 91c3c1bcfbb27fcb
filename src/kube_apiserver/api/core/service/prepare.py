"""How a Service write is completed before validation (pkg/registry/core/service/strategy.go):
allocated values a client left out are kept, clusterIP and clusterIPs are kept in step, and fields a
new type does not use are wiped when the client did not change them."""

from __future__ import annotations

from typing import Any

from .clusterips import cluster_ips, families, spec_of
from .types import needs_cluster_ip, needs_health_check, needs_node_port, node_ports, ports_of

Object = dict[str, Any]


def patch_allocated_values(svc: Object, old: Object) -> None:
    """patchAllocatedValues: resubmitting what was created (without the allocated values) succeeds."""
    spec, prev = spec_of(svc), spec_of(old)
    if needs_cluster_ip(old) and needs_cluster_ip(svc):
        if not spec.get("clusterIP") and prev.get("clusterIP"):
            spec["clusterIP"] = prev["clusterIP"]
        if not spec.get("clusterIPs") and prev.get("clusterIPs"):
            spec["clusterIPs"] = list(prev["clusterIPs"])
    if needs_node_port(old) and needs_node_port(svc):
        by_name = {p.get("name") or "": p.get("nodePort") for p in ports_of(old)}
        for port in ports_of(svc):
            if not port.get("nodePort") and by_name.get(port.get("name") or ""):
                port["nodePort"] = by_name[port.get("name") or ""]
    if needs_health_check(old) and needs_health_check(svc) and not spec.get("healthCheckNodePort") and \
            prev.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = prev["healthCheckNodePort"]


def normalize_cluster_ips(svc: Object, old: Object | None) -> None:
    """NormalizeClusterIPs: clusterIPs follows clusterIP for clients that only know the singular."""
    spec = spec_of(svc)
    ip, ips = spec.get("clusterIP") or "", cluster_ips(svc)
    if old is None:
        if ip and not ips:
            spec["clusterIPs"] = [ip]
        return
    old_ip, old_ips = spec_of(old).get("clusterIP") or "", cluster_ips(old)
    if old_ips and not ips and old_ip == ip:
        spec["clusterIPs"] = ips = list(old_ips)
    if old_ip != ip and ips == old_ips:
        if old_ip and not ip:
            spec.pop("clusterIPs", None)
        else:
            spec["clusterIPs"] = [ip]


def _same_cluster_ips(svc: Object, old: Object) -> bool:
    return spec_of(svc).get("clusterIP") == spec_of(old).get("clusterIP") and cluster_ips(svc) == cluster_ips(old)


def _wipe_cluster_ip_fields(svc: Object, old: Object) -> None:
    spec = spec_of(svc)
    if _same_cluster_ips(svc, old):
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    if families(svc) == families(old):
        spec.pop("ipFamilies", None)
    if spec.get("ipFamilyPolicy") == spec_of(old).get("ipFamilyPolicy"):
        spec.pop("ipFamilyPolicy", None)


def drop_type_dependent_fields(svc: Object, old: Object) -> None:
    """dropTypeDependentFields: what the old type allocated goes when the type changes and the client
    did not change it."""
    spec, prev = spec_of(svc), spec_of(old)
    if needs_cluster_ip(old) and not needs_cluster_ip(svc):
        _wipe_cluster_ip_fields(svc, old)
    if needs_node_port(old) and not needs_node_port(svc) and set(node_ports(svc)) <= set(node_ports(old)):
        for port in ports_of(svc):
            port.pop("nodePort", None)
    if needs_node_port(old) and not needs_node_port(svc) and \
            spec.get("externalTrafficPolicy") == prev.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)  # needsExternalTrafficPolicy: NodePort and LoadBalancer
    if needs_health_check(old) and not needs_health_check(svc) and \
            spec.get("healthCheckNodePort") == prev.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if prev.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is not None and \
                spec.get("allocateLoadBalancerNodePorts") == prev.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == prev.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)


def trim_for_dual_stack_downgrade(svc: Object, old: Object) -> None:
    """trimFieldsForDualStackDowngrade: SingleStack after a dual-stack policy keeps the primary only."""
    spec = spec_of(svc)
    if spec_of(old).get("ipFamilyPolicy") in ("RequireDualStack", "PreferDualStack") and \
            spec.get("ipFamilyPolicy") == "SingleStack":
        if len(cluster_ips(svc)) > 1:
            spec["clusterIPs"] = cluster_ips(svc)[:1]
        if len(families(svc)) > 1:
            spec["ipFamilies"] = families(svc)[:1]
