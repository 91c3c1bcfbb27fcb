"""The repair pass at start (pkg/registry/core/service/ipallocator/controller/repairip.go and
portallocator/controller/repair.go): every Service's cluster IPs have their IPAddress, leaked
IPAddresses (no Service, or a Service without that IP) are deleted, and the node ports in use are
rebuilt from the stored Services."""

from __future__ import annotations

import logging
from typing import Any

from ....registry.options import ListQuery
from ....registry.store import Store
from .alloc import Allocators
from .clusterips import NONE, cluster_ips, spec_of
from .ipallocator import AllocationError, ip_address_object, system_context
from .types import needs_health_check, node_ports

log = logging.getLogger("kube_apiserver.services")
Object = dict[str, Any]


def _owner(ip_address: Object) -> tuple[str, str] | None:
    ref = (ip_address.get("spec") or {}).get("parentRef") or {}
    if ref.get("resource") != "services" or ref.get("group"):
        return None
    return ref.get("namespace") or "", ref.get("name") or ""


async def _restore_ip(allocators: Allocators, svc: Object, ip: str, existing: dict[str, Object]) -> None:
    meta = svc["metadata"]
    if ip in existing or not allocators.ips.contains(ip):
        if ip not in existing and ip != NONE:
            log.warning("the cluster IP %s of service %s/%s is not within any service CIDR",
                        ip, meta.get("namespace"), meta.get("name"))
        return
    obj = ip_address_object(ip, allocators.ips.family, meta.get("namespace", ""), meta.get("name", ""))
    try:
        await allocators.ips.addresses.create(system_context(), obj)
    except Exception:  # noqa: BLE001 - created meanwhile: nothing to repair
        return
    log.info("repaired the IPAddress of cluster IP %s of service %s/%s", ip, meta.get("namespace"), meta.get("name"))


def _restore_ports(allocators: Allocators, svc: Object) -> None:
    ports = list(node_ports(svc))
    if needs_health_check(svc) and spec_of(svc).get("healthCheckNodePort"):
        ports.append(spec_of(svc)["healthCheckNodePort"])
    for port in ports:
        try:
            allocators.ports.allocate(port)
        except AllocationError as err:
            meta = svc["metadata"]
            log.warning("node port %d of service %s/%s: %s", port, meta.get("namespace"), meta.get("name"), err)


async def repair(services: Store, allocators: Allocators) -> None:
    listed = (await services.list(system_context(), ListQuery()))["items"]
    existing = {item["metadata"]["name"]: item for item in await allocators.ips.owned()}
    wanted: dict[str, tuple[str, str]] = {}
    for svc in listed:
        meta = svc["metadata"]
        for ip in cluster_ips(svc):
            wanted[ip] = (meta.get("namespace", ""), meta.get("name", ""))
            await _restore_ip(allocators, svc, ip, existing)
        _restore_ports(allocators, svc)
    for name, item in existing.items():
        if _owner(item) is not None and wanted.get(name) != _owner(item):
            log.info("released leaked IPAddress %s", name)
            await allocators.ips.release(name)
