"""Lease reuse (k8s.io/apiserver/pkg/storage/etcd3/lease_manager.go): writes with a TTL within a short
window share one etcd lease, granted a little longer than asked, instead of one lease per write."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

REUSE_DURATION_SECONDS = 60  # the most a lease outlives the TTL asked for
REUSE_DURATION_PERCENT = 0.05  # ...and at most this share of it
MAX_ATTACHED_OBJECTS = 1000


class LeaseManager:
    def __init__(self, grant: Callable[[int], Awaitable[int]]):
        self._grant = grant
        self._lock = asyncio.Lock()
        self._lease_id = 0
        self._expires = 0.0
        self._attached = 0

    def forget(self, lease_id: int) -> None:
        """etcd no longer has `lease_id` (revoked, or lost with its cluster): the next write gets a new one."""
        if self._lease_id == lease_id:
            self._expires = 0.0

    async def get_lease(self, ttl: float) -> int:
        """A lease ID that keeps a key at least `ttl` seconds (etcd counts whole seconds)."""
        seconds = max(1, math.ceil(ttl))
        async with self._lock:
            now = time.monotonic()
            reuse = min(int(REUSE_DURATION_PERCENT * seconds), REUSE_DURATION_SECONDS)
            valid = now + seconds < self._expires
            sufficient = now + seconds + reuse > self._expires
            self._attached += 1
            if valid and sufficient and self._attached <= MAX_ATTACHED_OBJECTS:
                return self._lease_id
            seconds += reuse
            self._lease_id = await self._grant(seconds)
            self._expires = now + seconds
            self._attached = 1
            return self._lease_id
