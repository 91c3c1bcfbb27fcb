"""Resolving a service to one ready endpoint (k8s.io/apiserver/pkg/util/proxy ResolveEndpoint, which
kube-apiserver uses with --enable-aggregator-routing for aggregated APIs, admission webhooks and CRD
conversion webhooks): a service port by number, then a ready endpoint of an EndpointSlice port of the
same name. A service with no EndpointSlices has its Endpoints read as the endpointslice-mirroring
controller would mirror them (this server runs no such controller), so a selector-less Service with
hand-written Endpoints can back a webhook or an APIService."""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from ...apimachinery import errors
from ...apimachinery.field import go_quote
from ...client.informers import Lister, SharedInformerFactory
from ...registry.context import Context, UserInfo
from ...registry.options import ListQuery

Object = dict[str, Any]
RouteTable = dict[tuple[str, str], dict[str, Any]]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
ROUTED_TYPES = ("ClusterIP", "LoadBalancer", "NodePort")
READER = UserInfo("system:apiserver", groups=("system:masters",))


class ResolveError(Exception):
    """Why no endpoint could be chosen; str() is the message Kubernetes gives."""


def _storage(routes: RouteTable, group: str, resource: str) -> Any:
    route = routes.get((group, "v1"), {}).get(resource)
    return route.scope.storage if route is not None else None


def ready(endpoint: Object) -> bool:
    value = (endpoint.get("conditions") or {}).get("ready")
    return value is None or value is True


def _address_type(ip: str) -> str:
    try:
        return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    except ValueError:
        return "IPv4"


def mirrored_slices(endpoints: Object | None) -> list[Object]:
    """Endpoints subsets as EndpointSlices: ready and not-ready addresses, the subset's ports."""
    if not endpoints or ((endpoints.get("metadata") or {}).get("labels") or {}).get(SKIP_MIRROR_LABEL) == "true":
        return []
    slices = []
    for subset in endpoints.get("subsets") or []:
        members = [(a, True) for a in subset.get("addresses") or []] + \
                  [(a, False) for a in subset.get("notReadyAddresses") or []]
        members = [(a, r) for a, r in members if a.get("ip")]
        if not members:
            continue
        slices.append({
            "addressType": _address_type(members[0][0]["ip"]),
            "endpoints": [{"addresses": [a["ip"]], "conditions": {"ready": r}} for a, r in members],
            "ports": [{"name": p.get("name") or "", "port": p.get("port"), "protocol": p.get("protocol", "TCP")}
                      for p in subset.get("ports") or []]})
    return slices


class ServiceLookup:
    """Reads services, EndpointSlices and Endpoints from the kube-apiserver link's storage."""

    def __init__(self, routes: RouteTable):
        self.services = _storage(routes, "", "services")
        self.slices = _storage(routes, "discovery.k8s.io", "endpointslices")
        self.endpoints = _storage(routes, "", "endpoints")

    @staticmethod
    async def _get(store: Any, namespace: str, name: str) -> Object | None:
        if store is None:
            return None
        try:
            return await store.get(Context(namespace, READER), name)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    async def service(self, namespace: str, name: str) -> Object | None:
        return await self._get(self.services, namespace, name)

    async def endpoint_slices(self, namespace: str, name: str) -> list[Object]:
        """The service's EndpointSlices (by their service-name label), or its mirrored Endpoints."""
        slices: list[Object] = []
        if self.slices is not None:
            query = ListQuery(label_selector=f"{SERVICE_NAME_LABEL}={name}", resource_version="0")
            slices = (await self.slices.list(Context(namespace, READER), query))["items"]
        return slices or mirrored_slices(await self._get(self.endpoints, namespace, name))

    async def resolve_endpoint(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        """ResolveEndpoint: (ip, port) of a ready endpoint of the service's port `port`."""
        service = await self.service(namespace, name)
        if service is None:
            raise ResolveError(f"service {go_quote(name)} not found")
        spec = service.get("spec") or {}
        if (spec.get("type") or "ClusterIP") not in ROUTED_TYPES:
            raise ResolveError(f"unsupported service type {go_quote(spec.get('type') or '')}")
        service_port = next((p for p in spec.get("ports") or [] if p.get("port") == port), None)
        if service_port is None:
            raise ResolveError(f"no service port {port} found for service {go_quote(name)}")
        slices = await self.endpoint_slices(namespace, name)
        found = pick_endpoint(slices, service_port.get("name") or "")
        if found is None:
            raise ResolveError(f"no endpoints available for service {go_quote(name)}")
        return found


def pick_endpoint(slices: list[Object], port_name: str) -> tuple[str, int] | None:
    """From a random start, the first ready endpoint of a slice port named `port_name`."""
    for endpoint_slice in slices:
        endpoints = [e for e in endpoint_slice.get("endpoints") or [] if e.get("addresses")]
        for port in endpoint_slice.get("ports") or []:
            if port.get("name") is None or port["name"] != port_name or port.get("port") is None or not endpoints:
                continue
            offset = random.randrange(len(endpoints))
            for i in range(len(endpoints)):
                endpoint = endpoints[(i + offset) % len(endpoints)]
                if ready(endpoint):
                    return endpoint["addresses"][0], port["port"]
    return None


class InformerServiceLookup(ServiceLookup):
    """Services, EndpointSlices and Endpoints read from the loopback client's shared informers (the
    endpoints listers --enable-aggregator-routing resolves with), each started by its first lookup."""

    def __init__(self, informers: SharedInformerFactory):
        self.service_lister = Lister(informers.for_resource("", "v1", "services"))
        self.slice_lister = Lister(informers.for_resource("discovery.k8s.io", "v1", "endpointslices"))
        self.endpoints_lister = Lister(informers.for_resource("", "v1", "endpoints"))

    async def service(self, namespace: str, name: str) -> Object | None:
        return await self.service_lister.get(name, namespace)

    async def endpoint_slices(self, namespace: str, name: str) -> list[Object]:
        slices = [s for s in await self.slice_lister.list(namespace)
                  if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == name]
        return slices or mirrored_slices(await self.endpoints_lister.get(name, namespace))


class ServiceResolver:
    """Resolves a webhook's (or a conversion webhook's) service through the server's shared informers."""

    def __init__(self, informers: SharedInformerFactory | None = None) -> None:
        self.lookup: ServiceLookup | None = None if informers is None else InformerServiceLookup(informers)

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.lookup = InformerServiceLookup(informers)

    async def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        if self.lookup is None:
            raise ResolveError(f"service {go_quote(name)} not found")
        return await self.lookup.resolve_endpoint(namespace, name, port)
