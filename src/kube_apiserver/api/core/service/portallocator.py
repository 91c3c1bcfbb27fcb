"""NodePort allocation (pkg/registry/core/service/portallocator): the ports of --service-node-port-range
in use are a bitmap stored as the RangeAllocation /registry/ranges/servicenodeports, which every replica
allocates from with compare-and-swap writes and the repair controller rebuilds from the stored Services;
and the operation a create or update allocates through, which keeps its releases until it commits and
undoes its allocations unless it does. Dynamic allocations start at a random port of the upper part of
the range, leaving the lower part for static ones (KEP-3668)."""

from __future__ import annotations

import logging
from typing import Any

from ....cli.portrange import PortRange
from ....storage.interface import Interface
from .bitmap import AllocationBitmap
from .ipallocator import AllocationError
from .rangeallocation import StoredBitmap, allocation_data, range_allocation

log = logging.getLogger("kube_apiserver.services")
ALLOCATED = "provided port is already allocated"
FULL = "range is full"
DRY_RUN_FIRST_GUESS = 32768
NODE_PORTS_KEY = "/registry/ranges/servicenodeports"
NODE_PORTS_RESOURCE = "servicenodeportallocations"


def range_offset(size: int) -> int:
    """calculateRangeOffset: min(max(16, size/32), 128) ports kept for static allocation."""
    if size <= 16:
        return 0
    return min(max(16, size // 32), 128)


def new_bitmap(ports: PortRange) -> AllocationBitmap:
    return AllocationBitmap(ports.size, str(ports), range_offset(ports.size))


class NotInRangeError(AllocationError):
    def __init__(self, ports: PortRange):
        super().__init__(f"provided port is not in the valid range. The range of valid ports is {ports}")


class PortSet:
    """An in-memory port allocator (portallocator.NewInMemory, NewFromSnapshot): what a repair rebuilds."""

    def __init__(self, ports: PortRange):
        self.range = ports
        self.bitmap = new_bitmap(ports)

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> PortSet:
        try:
            ports = PortRange.parse(snapshot.get("range") or "")
        except ValueError as err:
            raise AllocationError(f"unable to rebuild allocator from snapshot: {err}") from None
        restored = cls(ports)
        restored.bitmap.restore(str(ports), allocation_data(snapshot))
        return restored

    def allocate(self, port: int) -> None:
        if not self.range.contains(port):
            raise NotInRangeError(self.range)
        if not self.bitmap.allocate(port - self.range.base):
            raise AllocationError(ALLOCATED)

    def release(self, port: int) -> None:
        if self.range.contains(port):
            self.bitmap.release(port - self.range.base)

    def has(self, port: int) -> bool:
        return self.range.contains(port) and self.bitmap.has(port - self.range.base)

    def ports(self) -> list[int]:
        return [self.range.base + item for item in self.bitmap.items()]

    def snapshot(self, resource_version: str = "") -> dict[str, Any]:
        return range_allocation(*self.bitmap.snapshot(), resource_version)


class PortAllocator:
    """A server's node port allocator: every allocation and release a compare-and-swap of the stored
    bitmap, so that replicas on one storage never hand out one port twice."""

    def __init__(self, ports: PortRange, storage: Interface):
        self.range = ports
        self.stored = StoredBitmap(new_bitmap(ports), storage, NODE_PORTS_KEY, NODE_PORTS_RESOURCE)

    async def allocate(self, port: int) -> None:
        if not self.range.contains(port):
            raise NotInRangeError(self.range)
        if not await self.stored.allocate(port - self.range.base):
            raise AllocationError(ALLOCATED)

    async def allocate_next(self) -> int:
        item = await self.stored.allocate_next()
        if item is None:
            raise AllocationError(FULL)
        return self.range.base + item

    async def release(self, port: int) -> None:
        """A port out of the range is not allocated here: nothing to release (as kube-apiserver, which
        logs it)."""
        if self.range.contains(port):
            await self.stored.release(port - self.range.base)

    def has(self, port: int) -> bool:
        """As of this replica's last allocation or release: what a dry run checks against."""
        return self.range.contains(port) and self.stored.has(port - self.range.base)


class PortOperation:
    """portallocator.PortAllocationOperation: allocations undone by finish() unless committed first;
    releases deferred until commit. A dry run checks without allocating."""

    def __init__(self, allocator: PortAllocator, dry_run: bool):
        self.allocator = allocator
        self.dry_run = dry_run
        self.allocated: list[int] = []
        self.deferred: list[int] = []
        self.committed = False

    async def allocate(self, port: int) -> None:
        if self.dry_run:
            if self.allocator.has(port) or port in self.allocated:
                raise AllocationError(ALLOCATED)
        else:
            await self.allocator.allocate(port)
        self.allocated.append(port)

    async def allocate_next(self) -> int:
        if not self.dry_run:
            port = await self.allocator.allocate_next()
            self.allocated.append(port)
            return port
        guess = max(self.allocated, default=DRY_RUN_FIRST_GUESS) + 1
        self.allocated.append(guess)
        return guess

    def release_deferred(self, port: int) -> None:
        self.deferred.append(port)

    async def commit(self) -> None:
        if not self.dry_run:
            await self._release(self.deferred)
        self.committed = True

    async def finish(self) -> None:
        if not self.committed and not self.dry_run:
            await self._release(self.allocated)
        self.allocated, self.deferred = [], []

    async def _release(self, ports: list[int]) -> None:
        """A release that fails is logged, not raised: the Service is written (or not) already, and the
        repair controller frees a port nothing uses (kube-apiserver logs Commit's errors too)."""
        for port in ports:
            try:
                await self.allocator.release(port)
            except Exception as err:  # noqa: BLE001 - see above
                log.error("failed to release node port %d: %s", port, getattr(err, "message", err))
