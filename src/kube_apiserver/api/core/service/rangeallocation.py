"""An allocation bitmap kept in storage as a core/v1 RangeAllocation object
(pkg/registry/core/service/allocator/storage/storage.go): every allocation and release is a
compare-and-swap of the stored bitmap (guaranteed_update, retried on conflict), applied to this
replica's copy of the bitmap restored from the stored one whenever another replica has written since.
The object exists once the repair controller's first run has written it; until then nothing allocates."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Callable
from typing import Any

from ....storage.interface import Interface, KeyNotFoundError
from .bitmap import AllocationBitmap
from .ipallocator import AllocationError

Object = dict[str, Any]


class RangeConflictError(Exception):
    """The stored allocation changed since the snapshot a repair rebuilt (apierrors.NewConflict)."""

    def __init__(self, resource: str, why: str):
        super().__init__(f'Operation cannot be fulfilled on {resource} "": {why}')


class _Unchanged(Exception):
    """Ends a read-modify-write that has nothing to write."""


def range_allocation(range_spec: str, data: bytes, resource_version: str = "") -> Object:
    meta = {"resourceVersion": resource_version} if resource_version else {}
    return {
        "apiVersion": "v1",
        "kind": "RangeAllocation",
        "metadata": meta,
        "range": range_spec,
        "data": base64.b64encode(data).decode(),
    }


def allocation_data(obj: Object) -> bytes:
    """The stored bitmap's bytes; a value that is not base64 is a corrupt bitmap, read as empty."""
    try:
        return base64.b64decode(obj.get("data") or "", validate=True)
    except (binascii.Error, ValueError, TypeError):
        return b""


def resource_version(obj: Object) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class StoredBitmap:
    """allocator/storage.Etcd: `bitmap` is this replica's copy; `key` the RangeAllocation's key."""

    def __init__(self, bitmap: AllocationBitmap, storage: Interface, key: str, resource: str):
        self.bitmap = bitmap
        self.storage = storage
        self.key = key
        self.resource = resource
        self.last = ""  # the resourceVersion the local bitmap was restored from or written at
        self.lock = asyncio.Lock()  # one read-modify-write of this replica's bitmap at a time

    async def allocate(self, item: int) -> bool:
        async with self.lock:
            return await self._try_update(lambda: self.bitmap.allocate(item))

    async def allocate_next(self) -> int | None:
        picked: list[int] = []

        def pick() -> bool:
            item = self.bitmap.allocate_next()
            picked[:] = [] if item is None else [item]
            return item is not None

        async with self.lock:
            return picked[0] if await self._try_update(pick) else None

    async def release(self, item: int) -> None:
        def release() -> bool:
            held = self.bitmap.has(item)
            self.bitmap.release(item)
            return held

        async with self.lock:
            await self._try_update(release)

    def has(self, item: int) -> bool:
        """As of this replica's last read or write (Etcd.Has)."""
        return self.bitmap.has(item)

    async def _try_update(self, change: Callable[[], bool]) -> bool:
        """Applies `change` to the stored bitmap; False, and nothing written, when it changes nothing
        (an item allocated already, a full range, a release of a free item)."""

        async def update(existing: Object) -> Object:
            version = resource_version(existing)
            if not version:
                raise AllocationError(f"cannot allocate resources of type {self.resource} at this time")
            if version != self.last:
                self.bitmap.restore(existing.get("range") or "", allocation_data(existing))
                self.last = version
            if not change():
                raise _Unchanged()
            return {**existing, **range_allocation(*self.bitmap.snapshot()), "metadata": existing["metadata"]}

        try:
            written = await self.storage.guaranteed_update(self.key, update, ignore_not_found=True)
        except _Unchanged:
            return False
        except BaseException:
            self.last = ""  # the local bitmap may hold a change that was never stored: read it again
            raise
        self.last = resource_version(written)
        return True

    async def get(self) -> Object:
        """The stored RangeAllocation; one without a resourceVersion when there is none yet."""
        try:
            return await self.storage.get(self.key)
        except KeyNotFoundError:
            return {}

    async def create_or_update(self, snapshot: Object) -> None:
        """Writes a repair's rebuilt bitmap, only over the stored object the snapshot was read from."""
        expected = resource_version(snapshot)

        async def update(existing: Object) -> Object:
            current = resource_version(existing)
            if expected and current and expected != current:
                raise RangeConflictError(self.resource, "the provided resource version does not match")
            if current and not expected:
                raise RangeConflictError(self.resource, "another caller has already initialized the resource")
            return {**snapshot, "metadata": existing.get("metadata") or {}}

        async with self.lock:
            written = await self.storage.guaranteed_update(self.key, update, ignore_not_found=True)
            self.bitmap.restore(snapshot.get("range") or "", allocation_data(snapshot))
            self.last = resource_version(written)
