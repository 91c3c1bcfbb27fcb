"""SetDefaults_Service (pkg/apis/core/v1/defaults.go)."""

from __future__ import annotations

from typing import Any

from .types import externally_accessible

Object = dict[str, Any]
DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800


def _default_affinity(spec: Object) -> None:
    spec["sessionAffinity"] = spec.get("sessionAffinity") or "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_AFFINITY_SECONDS}}


def _default_ports(spec: Object) -> None:
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        port["protocol"] = port.get("protocol") or "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port", 0)


def _default_ingress_ip_mode(svc: Object) -> None:
    """LoadBalancerIPMode: an ingress IP without a mode is a VIP."""
    status = svc.get("status") if isinstance(svc.get("status"), dict) else {}
    balancer = status.get("loadBalancer") if isinstance(status.get("loadBalancer"), dict) else {}
    for ingress in balancer.get("ingress") or []:
        if isinstance(ingress, dict) and ingress.get("ip") and ingress.get("ipMode") is None:
            ingress["ipMode"] = "VIP"


def default_service(svc: Object) -> None:
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        spec = svc["spec"] = {}
    _default_affinity(spec)
    spec["type"] = spec.get("type") or "ClusterIP"
    _default_ports(spec)
    if externally_accessible(svc) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        _default_ingress_ip_mode(svc)
