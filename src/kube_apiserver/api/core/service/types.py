"""What a Service's type implies (pkg/api/service/util.go and the helpers of pkg/registry/core/service):
which types get cluster IPs, node ports and a health check node port."""

from __future__ import annotations

from typing import Any

from .clusterips import spec_of

Object = dict[str, Any]
TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


def service_type(svc: Object) -> str:
    return spec_of(svc).get("type") or ""


def needs_cluster_ip(svc: Object) -> bool:
    return service_type(svc) != "ExternalName"


def needs_node_port(svc: Object) -> bool:
    return service_type(svc) in ("NodePort", "LoadBalancer")


def should_allocate_node_ports(svc: Object) -> bool:
    """shouldAllocateNodePorts: NodePort, and LoadBalancer unless allocateLoadBalancerNodePorts is false."""
    if service_type(svc) == "NodePort":
        return True
    if service_type(svc) == "LoadBalancer":
        return spec_of(svc).get("allocateLoadBalancerNodePorts") is not False
    return False


def externally_accessible(svc: Object) -> bool:
    """ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with external IPs."""
    kind = service_type(svc)
    return kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and bool(spec_of(svc).get("externalIPs")))


def needs_health_check(svc: Object) -> bool:
    """NeedsHealthCheck: a LoadBalancer whose external traffic stays on the local node."""
    return service_type(svc) == "LoadBalancer" and spec_of(svc).get("externalTrafficPolicy") == "Local"


def ports_of(svc: Object) -> list[Object]:
    return [p for p in spec_of(svc).get("ports") or [] if isinstance(p, dict)]


def node_ports(svc: Object) -> list[int]:
    """collectServiceNodePorts."""
    return [p["nodePort"] for p in ports_of(svc) if p.get("nodePort")]
