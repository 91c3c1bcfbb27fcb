"""Allocating a Service's cluster IPs and node ports on create and update, and releasing them
(pkg/registry/core/service/storage/alloc.go). Each allocation is a transaction the store commits
once the object is written, or reverts when the write fails."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ....apimachinery import errors, field
from .clusterips import NONE, cluster_ips, families, is_headless, spec_of
from .families import init_ip_family_fields, invalid, matching_prefer_dual_stack
from .ipallocator import AllocationError, IPAllocator
from .network import ServiceNetwork
from .portallocator import PortAllocator, PortOperation
from .types import (
    needs_cluster_ip,
    needs_health_check,
    needs_node_port,
    node_ports,
    ports_of,
    service_type,
    should_allocate_node_ports,
)

Object = dict[str, Any]
Step = Callable[[], Awaitable[None]]


class Transaction:
    def __init__(self) -> None:
        self.commits: list[Step] = []
        self.reverts: list[Step] = []

    def add(self, commit: Step | None = None, revert: Step | None = None) -> None:
        if commit is not None:
            self.commits.append(commit)
        if revert is not None:
            self.reverts.append(revert)

    async def commit(self) -> None:
        for step in self.commits:
            await step()

    async def revert(self) -> None:
        for step in reversed(self.reverts):
            await step()


def _port_steps(op: PortOperation) -> tuple[Step, Step]:
    async def commit() -> None:
        await op.commit()
        await op.finish()

    async def revert() -> None:
        await op.finish()
    return commit, revert


def _node_port_error(svc: Object, index: int, port: int, err: AllocationError) -> errors.StatusError:
    path = field.Path("spec", "ports").index(index).child("nodePort")
    return invalid(svc, [field.invalid(path, port, str(err))])


class Allocators:
    def __init__(self, network: ServiceNetwork, ips: IPAllocator, ports: PortAllocator):
        self.network = network
        self.ips = ips
        self.ports = ports

    # ---- create ----

    async def allocate_create(self, svc: Object, dry_run: bool) -> Transaction:
        init_ip_family_fields(svc, None, self.network)
        txn = Transaction()
        allocated = await self.alloc_cluster_ips(svc, dry_run)
        txn.add(revert=lambda: self.release_ips(allocated.values(), dry_run))
        op = PortOperation(self.ports, dry_run)
        txn.add(*_port_steps(op))
        try:
            if needs_node_port(svc):
                await self.init_node_ports(svc, op)
            if needs_health_check(svc):
                await self.alloc_health_check_port(svc, op)
        except errors.StatusError:
            await txn.revert()
            raise
        return txn

    async def alloc_cluster_ips(self, svc: Object, dry_run: bool) -> dict[str, str]:
        """allocClusterIPs: one IP per family, the requested one or the next free one."""
        if not needs_cluster_ip(svc) or is_headless(svc):
            return {}
        spec = spec_of(svc)
        wanted = cluster_ips(svc) + [""] * (len(families(svc)) - len(cluster_ips(svc)))
        allocated: dict[str, str] = {}
        try:
            for family, ip in zip(families(svc), wanted, strict=False):
                allocated[family] = await self._alloc_ip(svc, ip, wanted, dry_run)
        except errors.StatusError:
            await self.release_ips(allocated.values(), dry_run)
            raise
        spec["clusterIPs"] = [allocated[f] for f in families(svc)]
        spec["clusterIP"] = spec["clusterIPs"][0]
        return allocated

    async def _alloc_ip(self, svc: Object, ip: str, wanted: list[str], dry_run: bool) -> str:
        if not ip:
            try:
                return await self.ips.allocate_next(svc, dry_run)
            except AllocationError as err:
                raise errors.internal_error(f"failed to allocate a serviceIP: {err}") from None
        try:
            await self.ips.allocate(ip, svc, dry_run)
        except AllocationError as err:
            raise invalid(svc, [field.invalid(field.Path("spec", "clusterIPs"), wanted,
                                              f"failed to allocate IP {ip}: {err}")]) from None
        return ip

    async def init_node_ports(self, svc: Object, op: PortOperation) -> None:
        """initNodePorts: ports sharing a port number share a node port."""
        by_port: dict[Any, int] = {}
        ports = ports_of(svc)
        for i, port in enumerate(ports):
            if not port.get("nodePort") and not should_allocate_node_ports(svc):
                continue
            shared = by_port.get(port.get("port"), 0)
            if not shared:
                requested = next((p["nodePort"] for p in ports if p.get("port") == port.get("port")
                                  and p.get("nodePort")), 0)
                port["nodePort"] = await self._node_port(svc, op, i, requested)
                by_port[port.get("port")] = port["nodePort"]
            elif not port.get("nodePort"):
                port["nodePort"] = shared
            elif port["nodePort"] != shared:
                await self._node_port(svc, op, i, port["nodePort"])

    @staticmethod
    async def _node_port(svc: Object, op: PortOperation, index: int, requested: int) -> int:
        if requested:
            try:
                await op.allocate(requested)
            except AllocationError as err:
                raise _node_port_error(svc, index, requested, err) from None
            return requested
        try:
            return await op.allocate_next()
        except AllocationError as err:
            raise errors.internal_error(f"failed to allocate a nodePort: {err}") from None

    @staticmethod
    async def alloc_health_check_port(svc: Object, op: PortOperation) -> None:
        spec = spec_of(svc)
        requested = spec.get("healthCheckNodePort") or 0
        try:
            if requested:
                await op.allocate(requested)
            else:
                spec["healthCheckNodePort"] = await op.allocate_next()
        except AllocationError as err:
            what = f"requested HealthCheck NodePort {requested}" if requested else "a HealthCheck NodePort 0"
            raise errors.internal_error(f"failed to allocate {what}: {err}") from None

    # ---- update ----

    async def allocate_update(self, svc: Object, old: Object, dry_run: bool) -> Transaction:
        init_ip_family_fields(svc, old, self.network)
        allocated, released = await self.update_cluster_ips(svc, old, dry_run)
        txn = Transaction()
        txn.add(commit=lambda: self.release_ips(released, dry_run),
                revert=lambda: self.release_ips(allocated, dry_run))
        op = PortOperation(self.ports, dry_run)
        txn.add(*_port_steps(op))
        try:
            await self.update_node_ports(svc, old, op)
            await self.update_health_check_port(svc, old, op)
        except errors.StatusError:
            await txn.revert()
            raise
        return txn

    async def update_cluster_ips(self, svc: Object, old: Object, dry_run: bool) -> tuple[list[str], list[str]]:
        """(allocated, to release once written): a type change to or from ExternalName. This cluster is
        single-stack, so no upgrade to or downgrade from dual-stack reaches here."""
        if matching_prefer_dual_stack(svc, old):
            return [], []
        if service_type(old) == "ExternalName" and service_type(svc) != "ExternalName":
            return list((await self.alloc_cluster_ips(svc, dry_run)).values()), []
        if is_headless(old):
            return [], []
        if service_type(old) != "ExternalName" and service_type(svc) == "ExternalName":
            return [], [ip for ip in cluster_ips(old) if ip != NONE]
        return [], []

    async def update_node_ports(self, svc: Object, old: Object, op: PortOperation) -> None:
        if needs_node_port(old) and service_type(svc) in ("ExternalName", "ClusterIP"):
            for port in node_ports(old):
                op.release_deferred(port)
        if not needs_node_port(svc):
            return
        previous, fresh, seen = node_ports(old), set(), []
        for i, port in enumerate(ports_of(svc)):
            number = port.get("nodePort") or 0
            if not number and not should_allocate_node_ports(svc):
                continue
            if not number:
                port["nodePort"] = number = await self._node_port(svc, op, i, 0)
            elif number not in previous and number not in fresh:
                await self._node_port(svc, op, i, number)
                fresh.add(number)
            key = (port.get("protocol"), number)
            if key in seen:  # ValidateService's answer (Kubernetes validates before it allocates)
                raise invalid(svc, [field.duplicate(field.Path("spec", "ports").index(i).child("nodePort"), number)])
            seen.append(key)
        for port in previous:
            if port not in node_ports(svc):
                op.release_deferred(port)

    async def update_health_check_port(self, svc: Object, old: Object, op: PortOperation) -> None:
        if not needs_health_check(old) and needs_health_check(svc):
            await self.alloc_health_check_port(svc, op)
        elif needs_health_check(old) and not needs_health_check(svc):
            op.release_deferred(spec_of(old).get("healthCheckNodePort") or 0)

    # ---- release ----

    async def release_ips(self, ips: Any, dry_run: bool) -> None:
        if dry_run:
            return
        for ip in list(ips):
            if self.ips.contains(ip):
                await self.ips.release(ip)

    async def release_all(self, svc: Object) -> None:
        """releaseAllocatedResources: after a Service is deleted."""
        if needs_cluster_ip(svc) and not is_headless(svc):
            await self.release_ips(cluster_ips(svc), False)
        op = PortOperation(self.ports, False)  # its commit logs a release that fails
        for port in node_ports(svc):
            op.release_deferred(port)
        if needs_health_check(svc) and spec_of(svc).get("healthCheckNodePort"):
            op.release_deferred(spec_of(svc)["healthCheckNodePort"])
        await op.commit()
