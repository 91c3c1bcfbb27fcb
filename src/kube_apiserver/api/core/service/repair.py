"""The allocation repair controllers (kube-apiserver's start-service-ip-repair-controllers), run on every
replica and safe beside each other's and beside allocations in flight:

- node ports (portallocator/controller/repair.go): at start and every interval, the bitmap is rebuilt
  from the stored Services and written over the stored one only if nothing was allocated or released
  since it was read (a conflict runs the repair again). A port allocated but used by no Service is
  released only when seen so in `NUM_REPAIRS_BEFORE_LEAK_CLEANUP` runs in a row: a create in flight
  holds its port before its Service is written.
- cluster IPs (ipallocator/controller/repairip.go): every Service's cluster IPs have their IPAddress;
  an IPAddress of the allocator whose Service does not exist is deleted only once it is older than
  `IP_ADDRESS_GRACE_SECONDS` (a create in flight writes its IPAddress first), and looked at again then;
  one whose Service exists without that IP is deleted."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from ....apimachinery import errors
from ....apimachinery.clock import wall_time
from ....apimachinery.wait import cancel_and_wait
from ....registry.options import ListQuery
from ....registry.store import Store
from .alloc import Allocators
from .clusterips import NONE, cluster_ips
from .ipallocator import (
    CONTROLLER_NAME,
    LABEL_FAMILY,
    LABEL_MANAGED_BY,
    AllocationError,
    IPAllocator,
    ip_address_object,
    system_context,
)
from .portallocator import NotInRangeError, PortAllocator, PortSet
from .rangeallocation import RangeConflictError, resource_version

log = logging.getLogger("kube_apiserver.services")
Object = dict[str, Any]

REPAIR_INTERVAL_SECONDS = 180.0  # kube-apiserver's service IP and node port repair intervals (3 minutes)
NUM_REPAIRS_BEFORE_LEAK_CLEANUP = 3
IP_ADDRESS_GRACE_SECONDS = 60.0  # repairip.go's gracePeriod: kube-apiserver's default request timeout
# retry.DefaultBackoff (10ms, factor 5, 4 steps) of RetryOnConflict; its 10% jitter left out.
CONFLICT_BACKOFF_SECONDS = (0.01, 0.05, 0.25)
FIRST_RUN_TIMEOUT_SECONDS = 60.0  # the post-start hook gives up on the first successful repair after this
FIRST_RUN_RETRY_SECONDS = 1.0


async def retry_on_conflict(run: Callable[[], Awaitable[Any]]) -> Any:
    """retry.RetryOnConflict: the run again after a conflict, up to the backoff's steps."""
    for delay in CONFLICT_BACKOFF_SECONDS:
        try:
            return await run()
        except RangeConflictError:
            await asyncio.sleep(delay)
    return await run()


def collect_service_node_ports(svc: Object) -> list[int]:
    """collectServiceNodePorts: a node port once per Service, unless a port repeats it with the same
    protocol (a duplicate the repair then reports); the health check node port unless only a non-TCP
    port shares it."""
    ports: list[int] = []
    seen: dict[int, set[str]] = {}
    spec = svc.get("spec") or {}
    for port in spec.get("ports") or []:
        number, protocol = port.get("nodePort") or 0, port.get("protocol") or ""
        if not number:
            continue
        protocols = seen.setdefault(number, set())
        if not protocols or protocol in protocols:
            ports.append(number)
        protocols.add(protocol)
    health = spec.get("healthCheckNodePort") or 0
    if health and (health not in seen or "TCP" in seen[health]):
        ports.append(health)
    return ports


def _name(svc: Object) -> str:
    meta = svc.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


async def _list_services(services: Store) -> list[Object]:
    return (await services.list(system_context(), ListQuery()))["items"]


class NodePortRepair:
    """portallocator/controller.Repair of one replica: `leaks` counts down each unused allocated port.
    The counts a run computes are kept only once its bitmap is written: a run retried after a conflict
    does not count twice (upstream's would, and could free a port in flight within one repair)."""

    def __init__(self, services: Store, ports: PortAllocator):
        self.services = services
        self.ports = ports
        self.leaks: dict[int, int] = {}

    async def run_once(self) -> None:
        await retry_on_conflict(self._run_once)

    async def _run_once(self) -> None:
        snapshot = await self.ports.stored.get()  # read before the Services: what a create holds is in it
        snapshot.setdefault("range", "")
        if not snapshot["range"]:
            snapshot["range"] = str(self.ports.range)  # not yet initialized
        stored = PortSet.from_snapshot(snapshot)
        rebuilt = PortSet(self.ports.range)
        for svc in await _list_services(self.services):
            for port in collect_service_node_ports(svc):
                self._rebuild(svc, port, stored, rebuilt)
        leaks: dict[int, int] = {}
        for port in stored.ports():
            self._count_leak(port, rebuilt, leaks)
        await self.ports.stored.create_or_update(rebuilt.snapshot(resource_version(snapshot)))
        self.leaks = leaks

    def _rebuild(self, svc: Object, port: int, stored: PortSet, rebuilt: PortSet) -> None:
        try:
            rebuilt.allocate(port)
        except NotInRangeError:
            log.error(
                "the port %d for service %s is not within the port range %s; please recreate",
                port,
                _name(svc),
                self.ports.range,
            )
            return
        except AllocationError:
            log.error(
                "the node port %d for service %s was assigned to multiple services; please recreate",
                port,
                _name(svc),
            )
            return
        if stored.has(port):
            stored.release(port)  # used: what is left in `stored` afterwards has leaked
        else:
            log.error("the node port %d for service %s is not allocated; repairing", port, _name(svc))

    def _count_leak(self, port: int, rebuilt: PortSet, leaks: dict[int, int]) -> None:
        """An allocated port no Service uses: held (counted down in `leaks`) until its count runs out."""
        count = self.leaks.get(port)
        if count is None:
            log.warning("the node port %d may have leaked: flagging for later clean up", port)
            count = NUM_REPAIRS_BEFORE_LEAK_CLEANUP - 1
        if count > 0:
            leaks[port] = count - 1
            try:
                rebuilt.allocate(port)
            except AllocationError as err:
                log.error("the node port %d may have leaked, but can not be allocated: %s", port, err)
            return
        log.warning("the node port %d appears to have leaked: cleaning up", port)


def _created_at(obj: Object) -> float:
    """The creationTimestamp in seconds since the epoch; 0 (long ago) when missing or unreadable."""
    stamp = (obj.get("metadata") or {}).get("creationTimestamp") or ""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return 0.0


def _ref(ip_address: Object) -> Object:
    return (ip_address.get("spec") or {}).get("parentRef") or {}


def _references_a_service(ip_address: Object) -> bool:
    ref = _ref(ip_address)
    return not ref.get("group") and ref.get("resource") == "services"


def _labels_valid(ip_address: Object, family: str) -> bool:
    labels = (ip_address.get("metadata") or {}).get("labels") or {}
    return labels.get(LABEL_FAMILY) == family and labels.get(LABEL_MANAGED_BY) == CONTROLLER_NAME


class ClusterIPRepair:
    """ipallocator/controller.RepairIPAddress's runs, over this replica's view of storage. `clock` and
    `grace` are fields so that tests can move time on."""

    def __init__(
        self,
        services: Store,
        ips: IPAllocator,
        clock: Callable[[], float] = wall_time,
        grace: float = IP_ADDRESS_GRACE_SECONDS,
    ):
        self.services = services
        self.ips = ips
        self.clock = clock
        self.grace = grace

    async def run_once(self) -> float | None:
        """One pass over the Services, then over the allocator's IPAddresses; the seconds until the
        grace of an IPAddress kept for a Service not written yet ends, when there is one."""
        listed = {_name(svc): svc for svc in await _list_services(self.services)}
        addresses = {item["metadata"]["name"]: item for item in await self._ip_addresses()}
        for svc in listed.values():
            await self._sync_service(svc, addresses, listed)
        recheck: list[float] = []
        for item in await self._ip_addresses():
            wait = await self._sync_ip_address(item, listed)
            if wait is not None:
                recheck.append(wait)
        return min(recheck, default=None)

    async def _ip_addresses(self) -> list[Object]:
        query = ListQuery(label_selector=f"{LABEL_MANAGED_BY}={CONTROLLER_NAME}")
        return (await self.ips.addresses.list(system_context(), query))["items"]

    async def _sync_service(
        self, svc: Object, addresses: dict[str, Object], listed: dict[str, Object]
    ) -> None:
        for ip in cluster_ips(svc):
            if ip in ("", NONE):
                continue
            if not self.ips.contains(ip):
                log.error(
                    "the ClusterIP [%s]: %s for Service %s is not within any service CIDR; please recreate",
                    self.ips.family,
                    ip,
                    _name(svc),
                )
                continue
            current = addresses.get(ip)
            if current is None:
                if ip not in cluster_ips(await self._service(svc["metadata"]) or {}):
                    continue  # deleted since it was listed, its IPAddress released after it: not to revive
                log.error(
                    "the ClusterIP [%s]: %s for Service %s is not allocated; repairing",
                    self.ips.family,
                    ip,
                    _name(svc),
                )
                await self._create(ip, svc)
            elif not _references_a_service(current) or not _labels_valid(current, self.ips.family):
                await self._repair_reference(ip, svc)
            elif (owner := f"{_ref(current).get('namespace', '')}/{_ref(current).get('name', '')}") != _name(
                svc
            ):
                if owner not in listed and await self._service(_ref(current)) is None:
                    await self._repair_reference(ip, svc)
                else:
                    log.error(
                        "the cluster IP [%s]:%s for service %s was assigned to other services %s; "
                        "please recreate",
                        self.ips.family,
                        ip,
                        _name(svc),
                        owner,
                    )

    async def _repair_reference(self, ip: str, svc: Object) -> None:
        log.error("the ClusterIP [%s]: %s for Service %s has a wrong reference; repairing", self.ips.family, ip,
                  _name(svc))
        await self._recreate(ip, svc)

    async def _sync_ip_address(self, item: Object, listed: dict[str, Object]) -> float | None:
        name = item["metadata"]["name"]
        if not _references_a_service(item):
            log.error(
                "IPAddress %s appears to have been modified, not referencing a Service %s: cleaning up",
                name,
                _ref(item),
            )
            await self.ips.release(name)
            return None
        ref = _ref(item)
        svc = listed.get(f"{ref.get('namespace', '')}/{ref.get('name', '')}") or await self._service(ref)
        if svc is None:
            lifetime = self.clock() - _created_at(item)
            if lifetime <= self.grace:
                return self.grace - lifetime  # its Service may be being created: look again then
            log.error("IPAddress %s appears to have leaked: cleaning up", name)
            await self.ips.release(name)
            return None
        if name not in cluster_ips(svc):
            log.error(
                "the IPAddress: %s for Service %s has a wrong reference %s; cleaning up",
                name,
                _name(svc),
                ref,
            )
            await self.ips.release(name)
        return None

    async def _service(self, ref: Object) -> Object | None:
        """The Service as stored now: one created since the list is not taken for missing."""
        try:
            return await self.services.get(system_context(ref.get("namespace") or ""), ref.get("name") or "")
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    async def _create(self, ip: str, svc: Object) -> None:
        meta = svc["metadata"]
        obj = ip_address_object(ip, self.ips.family, meta.get("namespace", ""), meta.get("name", ""))
        try:
            await self.ips.addresses.create(system_context(), obj)
        except errors.StatusError as err:
            if err.code != 409:  # created meanwhile (by another replica's repair): nothing to repair
                raise

    async def _recreate(self, ip: str, svc: Object) -> None:
        await self.ips.release(ip)
        await self._create(ip, svc)


class ServiceRepairController:
    """Both repairs of one replica: the post-start hook returns once each has run successfully once
    (failing after FIRST_RUN_TIMEOUT_SECONDS, as kube-apiserver's hook), then they run every interval.
    The intervals are fields so that tests can shorten them."""

    def __init__(self, services: Store, allocators: Allocators, interval: float = REPAIR_INTERVAL_SECONDS):
        self.node_ports = NodePortRepair(services, allocators.ports)
        self.cluster_ips = ClusterIPRepair(services, allocators.ips)
        self.node_port_interval = interval
        self.cluster_ip_interval = interval
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        synced = [asyncio.Event(), asyncio.Event()]
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._run(self._repair_node_ports, lambda: self.node_port_interval, synced[0])),
            loop.create_task(
                self._run(self._repair_cluster_ips, lambda: self.cluster_ip_interval, synced[1])
            ),
        ]
        first_runs = asyncio.ensure_future(asyncio.gather(*(event.wait() for event in synced)))
        done, _ = await asyncio.wait(
            {first_runs, *self._tasks}, timeout=FIRST_RUN_TIMEOUT_SECONDS, return_when=asyncio.FIRST_COMPLETED
        )
        if first_runs in done:
            return
        first_runs.cancel()
        if not done:  # neither succeeded in time (a stop during the wait ends it quietly)
            raise RuntimeError("unable to perform initial IP and Port allocation check")

    async def stop(self) -> None:
        await cancel_and_wait(*self._tasks)
        self._tasks = []

    async def _repair_node_ports(self) -> float:
        await self.node_ports.run_once()
        return self.node_port_interval

    async def _repair_cluster_ips(self) -> float:
        recheck = await self.cluster_ips.run_once()
        return self.cluster_ip_interval if recheck is None else min(self.cluster_ip_interval, recheck)

    @staticmethod
    async def _run(
        repair: Callable[[], Awaitable[float]], interval: Callable[[], float], synced: asyncio.Event
    ) -> None:
        """Runs the repair, then again after the delay it returns; a failed run is logged and tried
        again a second later until the first success, at the interval after it."""
        while True:
            try:
                delay = await repair()
                synced.set()
            except Exception as err:  # noqa: BLE001 - logged, and tried again
                log.error("service allocation repair failed: %s", getattr(err, "message", err))
                delay = interval() if synced.is_set() else FIRST_RUN_RETRY_SECONDS
            await asyncio.sleep(max(delay, 0.0))
