"""The columns `kubectl get services` prints (printService in pkg/printers/internalversion/printers.go;
the server prints with Wide set)."""

from __future__ import annotations

from typing import Any

from ....registry.rest import TableColumn
from ....registry.table import AGE, NAME, TableConvertor, age, name
from .clusterips import spec_of

Object = dict[str, Any]
COLUMNS = (
    NAME,
    TableColumn("Type", "string", "", 'type determines how the Service is exposed. Defaults to ClusterIP. Valid '
                "options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a "
                "cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the "
                "selector or if that is not specified, by manual construction of an Endpoints object or "
                'EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are '
                'published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and '
                "allocates a port on every node which routes to the same endpoints as the clusterIP. "
                '"LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the '
                "current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases "
                "this service to the specified externalName. Several other fields do not apply to ExternalName "
                "services. More info: https://kubernetes.io/docs/concepts/services-networking/service/"
                "#publishing-services-service-types"),
    TableColumn("Cluster-IP", "string", "", "clusterIP is the IP address of the service and is usually assigned "
                "randomly. If an address is specified manually, is in-range (as per system configuration), and is "
                "not in use, it will be allocated to the service; otherwise creation of the service will fail. This "
                "field may not be changed through updates unless the type field is also being changed to "
                "ExternalName (which requires this field to be blank) or the type field is being changed from "
                "ExternalName (in which case this field may optionally be specified, as describe above).  Valid "
                'values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a '
                '"headless service" (no virtual IP), which is useful when direct endpoint connections are '
                "preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and "
                "LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation "
                "will fail. This field will be wiped when updating a Service to type ExternalName. More info: "
                "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"),
    TableColumn("External-IP", "string", "", "externalIPs is a list of IP addresses for which nodes in the cluster "
                "will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is "
                "responsible for ensuring that traffic arrives at a node with this IP.  A common example is "
                "external load-balancers that are not part of the Kubernetes system."),
    TableColumn("Port(s)", "string", "", "The list of ports that are exposed by this service. More info: "
                "https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"),
    AGE,
    TableColumn("Selector", "string", "", "Route service traffic to pods with label keys and values matching this "
                "selector. If empty or not present, the service is assumed to have an external process managing "
                "its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and "
                "LoadBalancer. Ignored if type is ExternalName. More info: "
                "https://kubernetes.io/docs/concepts/services-networking/service/", 1),
)


def format_labels(labels: dict[str, str] | None) -> str:
    """labels.FormatLabels: sorted key=value pairs, or <none>."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def _load_balancer_ips(svc: Object) -> list[str]:
    balancer = (svc.get("status") or {}).get("loadBalancer") or {}
    return [i.get("ip") or i.get("hostname") for i in balancer.get("ingress") or []
            if i.get("ip") or i.get("hostname")]


def external_ip(svc: Object) -> str:
    """getServiceExternalIP (wide)."""
    spec = spec_of(svc)
    kind, external = spec.get("type"), list(spec.get("externalIPs") or [])
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        return ",".join(_load_balancer_ips(svc) + external) or "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName") or ""
    return "<unknown>"


def port_string(ports: list[Object]) -> str:
    """makePortString: port[:nodePort]/protocol, comma-separated."""
    pieces = []
    for port in ports:
        node = f":{port['nodePort']}" if port.get("nodePort") else ""
        pieces.append(f"{port.get('port', 0)}{node}/{port.get('protocol', '')}")
    return ",".join(pieces)


def _cells(svc: Object) -> list[Any]:
    spec = spec_of(svc)
    cluster_ip = (spec.get("clusterIPs") or ["<none>"])[0]
    ports = port_string(spec.get("ports") or []) or "<none>"
    return [name(svc), spec.get("type", ""), cluster_ip, external_ip(svc), ports, age(svc),
            format_labels(spec.get("selector"))]


TABLE = TableConvertor(COLUMNS, _cells)
