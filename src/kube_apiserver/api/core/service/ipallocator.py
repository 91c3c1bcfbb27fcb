"""ClusterIP allocation as v1.34 does it (pkg/registry/core/service/ipallocator, MultiCIDRServiceAllocator):
an IP is allocated by creating the networking.k8s.io/v1 IPAddress named after it, with a parentRef to
its Service, and released by deleting it; the state lives in storage. Dynamic allocations start at a
random address of the upper part of the range, leaving the lower part for static ones (KEP-3070)."""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterator
from typing import Any

from ....apimachinery import errors
from ....registry.context import Context, UserInfo
from ....registry.options import ListQuery
from ....registry.store import Store

Object = dict[str, Any]
CONTROLLER_NAME = "ipallocator.k8s.io"
LABEL_FAMILY = "ipaddress.kubernetes.io/ip-family"
LABEL_MANAGED_BY = "ipaddress.kubernetes.io/managed-by"
ALLOCATED = "provided IP is already allocated"
MISMATCHED = "the provided network does not match the current range"
FULL = "range is full"
SYSTEM_USER = UserInfo("system:apiserver", groups=("system:masters",))


def system_context(namespace: str = "") -> Context:
    return Context(namespace, SYSTEM_USER)


class AllocationError(Exception):
    pass


def range_offset(cidr_size: int) -> int:
    """calculateRangeOffset: min(max(16, size/16), 256) addresses kept for static allocation."""
    if cidr_size <= 16:
        return 0
    return min(max(16, cidr_size // 16), 256)


def cycle(low: int, high: int) -> Iterator[int]:
    """low..high, starting at a random point and wrapping around."""
    if high < low:
        return
    start = low + random.randrange(high - low + 1)
    yield from range(start, high + 1)
    yield from range(low, start)


def ip_address_object(ip: str, family: str, namespace: str, name: str) -> Object:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
            "metadata": {"name": ip, "labels": {LABEL_FAMILY: family, LABEL_MANAGED_BY: CONTROLLER_NAME}},
            "spec": {"parentRef": {"group": "", "resource": "services", "namespace": namespace, "name": name}}}


class IPAllocator:
    def __init__(self, cidr: str, addresses: Store):
        self.network = ipaddress.ip_network(cidr, strict=False)
        self.family = "IPv4" if self.network.version == 4 else "IPv6"
        self.first = int(self.network.network_address) + 1
        self.last = int(self.network.broadcast_address) - (1 if self.network.version == 4 else 0)
        self.offset = range_offset(self.network.num_addresses)
        self.addresses = addresses

    def _text(self, value: int) -> str:
        return str(ipaddress.ip_address(value) if self.network.version == 4 else ipaddress.IPv6Address(value))

    def check(self, ip: str) -> None:
        """The IP is one this range allocates (neither the network nor the broadcast address)."""
        address = ipaddress.ip_address(ip)
        if address.version != self.network.version or address not in self.network:
            raise AllocationError(MISMATCHED)
        if not self.first <= int(address) <= self.last:
            raise AllocationError(f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is "
                                  f"{self.network}")

    async def allocate(self, ip: str, service: Object, dry_run: bool) -> None:
        self.check(ip)
        if not dry_run:
            await self._create(ip, service)

    async def allocate_next(self, service: Object, dry_run: bool) -> str:
        if dry_run:
            return str(self.network.network_address)
        taken = await self.allocated()
        for value in self._candidates():
            ip = self._text(value)
            if ip in taken:
                continue
            try:
                await self._create(ip, service)
            except AllocationError:
                continue  # allocated meanwhile: try the next one
            return ip
        raise AllocationError(FULL)

    def _candidates(self) -> Iterator[int]:
        upper = self.first + self.offset
        yield from cycle(upper, self.last)
        yield from cycle(self.first, upper - 1)

    async def _create(self, ip: str, service: Object) -> None:
        meta = service.get("metadata") or {}
        obj = ip_address_object(ip, self.family, meta.get("namespace", ""), meta.get("name", ""))
        try:
            await self.addresses.create(system_context(), obj)
        except errors.StatusError as err:
            if err.code == 409:
                raise AllocationError(ALLOCATED) from None
            raise

    async def release(self, ip: str) -> None:
        """Deleting the IPAddress; releasing an unallocated IP is a no-op."""
        try:
            await self.addresses.delete(system_context(), ip)
        except errors.StatusError:
            pass

    def contains(self, ip: str) -> bool:
        try:
            self.check(ip)
        except (AllocationError, ValueError):
            return False
        return True

    async def allocated(self) -> set[str]:
        listed = await self.addresses.list(system_context(), ListQuery())
        return {item["metadata"]["name"] for item in listed["items"]}

    async def owned(self) -> list[Object]:
        """The IPAddresses this allocator manages."""
        query = ListQuery(label_selector=f"{LABEL_MANAGED_BY}={CONTROLLER_NAME},{LABEL_FAMILY}={self.family}")
        return (await self.addresses.list(system_context(), query))["items"]
