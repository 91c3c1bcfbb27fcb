"""NodePort allocation (pkg/registry/core/service/portallocator): the ports of --service-node-port-range
in use, rebuilt from the stored Services at start (the repair pass), and the operation a create or
update allocates through, which keeps its releases until it commits and undoes its allocations
unless it does. Dynamic allocations start at a random port of the upper part of the range, leaving
the lower part for static ones (KEP-3668)."""

from __future__ import annotations

from ....cli.portrange import PortRange
from .ipallocator import AllocationError, cycle

ALLOCATED = "provided port is already allocated"
FULL = "range is full"
DRY_RUN_FIRST_GUESS = 32768


def range_offset(size: int) -> int:
    """calculateRangeOffset: min(max(16, size/32), 128) ports kept for static allocation."""
    if size <= 16:
        return 0
    return min(max(16, size // 32), 128)



class PortAllocator:
    def __init__(self, ports: PortRange):
        self.range = ports
        self.used: set[int] = set()
        self.offset = range_offset(ports.size)

    def allocate(self, port: int) -> None:
        if not self.range.contains(port):
            raise AllocationError(f"provided port is not in the valid range. The range of valid ports is "
                                  f"{self.range}")
        if port in self.used:
            raise AllocationError(ALLOCATED)
        self.used.add(port)

    def allocate_next(self) -> int:
        upper = self.range.first + self.offset
        for port in (*cycle(upper, self.range.last), *cycle(self.range.first, upper - 1)):
            if port not in self.used:
                self.used.add(port)
                return port
        raise AllocationError(FULL)

    def release(self, port: int) -> None:
        self.used.discard(port)

    def has(self, port: int) -> bool:
        return port in self.used


class PortOperation:
    """portallocator.PortAllocationOperation: allocations undone by finish() unless committed first;
    releases deferred until commit. A dry run checks without allocating."""

    def __init__(self, allocator: PortAllocator, dry_run: bool):
        self.allocator = allocator
        self.dry_run = dry_run
        self.allocated: list[int] = []
        self.deferred: list[int] = []
        self.committed = False

    def allocate(self, port: int) -> None:
        if self.dry_run:
            if self.allocator.has(port) or port in self.allocated:
                raise AllocationError(ALLOCATED)
        else:
            self.allocator.allocate(port)
        self.allocated.append(port)

    def allocate_next(self) -> int:
        if not self.dry_run:
            port = self.allocator.allocate_next()
            self.allocated.append(port)
            return port
        guess = max(self.allocated, default=DRY_RUN_FIRST_GUESS) + 1
        self.allocated.append(guess)
        return guess

    def release_deferred(self, port: int) -> None:
        self.deferred.append(port)

    def commit(self) -> None:
        if not self.dry_run:
            for port in self.deferred:
                self.allocator.release(port)
        self.committed = True

    def finish(self) -> None:
        if not self.committed and not self.dry_run:
            for port in self.allocated:
                self.allocator.release(port)
        self.allocated, self.deferred = [], []
