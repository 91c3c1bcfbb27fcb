"""Resolving a service to one ready endpoint (k8s.io/apiserver/pkg/util/proxy ResolveEndpoint, which
kube-apiserver uses for webhooks with --enable-aggregator-routing): the service's port by number, then
an EndpointSlice port of the same name with a ready endpoint. Endpoints are read when the service has
no EndpointSlices at all (nothing here mirrors Endpoints into slices)."""

from __future__ import annotations

import random
from typing import Any

from ...apimachinery import errors
from ...registry.context import Context
from ...registry.options import ListQuery
from ..lister import ADMISSION_USER, RouteTable, route_storage

Object = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
ROUTED_TYPES = ("ClusterIP", "LoadBalancer", "NodePort")


class ResolveError(Exception):
    """Why no endpoint could be chosen; str() is the message Kubernetes reports."""


def _ready(endpoint: Object) -> bool:
    ready = (endpoint.get("conditions") or {}).get("ready")
    return ready is None or ready is True


def _from_slices(slices: list[Object], port_name: str) -> tuple[str, int] | None:
    for endpoint_slice in slices:
        endpoints = [e for e in endpoint_slice.get("endpoints") or [] if e.get("addresses")]
        for port in endpoint_slice.get("ports") or []:
            if (port.get("name") or "") != port_name or port.get("port") is None or not endpoints:
                continue
            offset = random.randrange(len(endpoints))
            for i in range(len(endpoints)):
                endpoint = endpoints[(i + offset) % len(endpoints)]
                if _ready(endpoint):
                    return endpoint["addresses"][0], port["port"]
    return None


def _from_endpoints(endpoints: Object | None, port_name: str) -> tuple[str, int] | None:
    for subset in (endpoints or {}).get("subsets") or []:
        addresses = [a for a in subset.get("addresses") or [] if a.get("ip")]
        for port in subset.get("ports") or []:
            if (port.get("name") or "") == port_name and addresses:
                return random.choice(addresses)["ip"], port["port"]
    return None


class ServiceResolver:
    def __init__(self) -> None:
        self.services: Any = None
        self.slices: Any = None
        self.endpoints: Any = None

    def bind(self, group_versions: RouteTable) -> None:
        self.services = route_storage(group_versions, "", "services")
        self.slices = route_storage(group_versions, "discovery.k8s.io", "endpointslices")
        self.endpoints = route_storage(group_versions, "", "endpoints")

    async def _get(self, store: Any, namespace: str, name: str) -> Object | None:
        if store is None:
            return None
        try:
            return await store.get(Context(namespace, ADMISSION_USER), name)
        except errors.StatusError:
            return None

    async def _slices(self, namespace: str, name: str) -> list[Object]:
        if self.slices is None:
            return []
        query = ListQuery(label_selector=f"{SERVICE_NAME_LABEL}={name}", resource_version="0")
        return (await self.slices.list(Context(namespace, ADMISSION_USER), query))["items"]

    async def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        service = await self._get(self.services, namespace, name)
        if service is None:
            raise ResolveError(f'service "{name}" not found')
        spec = service.get("spec") or {}
        if (spec.get("type") or "ClusterIP") not in ROUTED_TYPES:
            raise ResolveError(f'unsupported service type "{spec.get("type")}"')
        service_port = next((p for p in spec.get("ports") or [] if p.get("port") == port), None)
        if service_port is None:
            raise ResolveError(f'no service port {port} found for service "{name}"')
        slices = await self._slices(namespace, name)
        if slices:
            found = _from_slices(slices, service_port.get("name") or "")
        else:
            endpoints = await self._get(self.endpoints, namespace, name)
            found = _from_endpoints(endpoints, service_port.get("name") or "")
        if found is None:
            raise ResolveError(f'no endpoints available for service "{name}"')
        return found
