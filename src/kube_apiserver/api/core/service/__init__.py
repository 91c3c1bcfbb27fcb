"""services, services/status and services/proxy (pkg/registry/core/service): cluster IPs allocated as
IPAddress objects from --service-cluster-ip-range, node ports from --service-node-port-range."""

from __future__ import annotations

from typing import Any

from ....registry.store import Store
from ....storage.factory import StorageFactory
from ...networking import ip_address
from .alloc import Allocators
from .ipallocator import IPAllocator
from .network import ServiceNetwork
from .portallocator import NODE_PORTS_KEY, PortAllocator
from .proxy import ServiceProxyREST
from .store import ServiceStore
from .strategy import INFO, ServiceStrategy, status_rest
from .table import TABLE

__all__ = ["ServiceNetwork", "new_rest"]


def new_allocators(storage: StorageFactory, network: ServiceNetwork) -> Allocators:
    addresses = Store(ip_address.INFO, ip_address.IPAddressStrategy(ip_address.INFO), storage,
                      "/registry/ipaddresses", ip_address.TABLE)
    ports = PortAllocator(network.node_ports, storage.store_for(NODE_PORTS_KEY))  # no watch cache: read-modify-writes
    return Allocators(network, IPAllocator(network.cidr, addresses), ports)


def new_rest(storage: StorageFactory, network: ServiceNetwork | None = None,
             endpoints: Store | None = None, pods: Store | None = None) -> dict[str, Any]:
    """services/proxy reads the service's Endpoints and their pods: it is served when both are given."""
    allocators = new_allocators(storage, network or ServiceNetwork())
    store = ServiceStore(INFO, ServiceStrategy(INFO), storage, "/registry/services/specs", TABLE,
                         return_deleted_object=True, allocators=allocators, endpoints=endpoints)
    rest: dict[str, Any] = {"services": store, "services/status": status_rest(store)}
    if endpoints is not None and pods is not None:
        rest["services/proxy"] = ServiceProxyREST(store, endpoints, pods)
    return rest
