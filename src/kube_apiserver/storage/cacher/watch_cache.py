"""WatchCache: the current objects of one resource and a ring of its recent events, at a known
resourceVersion. Fed in order by one storage watch; read by lists and by watchers starting in the past."""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery.sharedfields import FieldsV1Sharing
from ..interface import ADDED, DELETED, ExpiredError, Object
from .snapshots import KeptSnapshots

DEFAULT_CAPACITY = 10_000


@dataclass(slots=True, eq=False)
class CachedEvent:
    """One change. Watchers that see the same variant of it share one WatchEvent (and its encoding)."""

    type: str
    key: str
    object: Object
    prev_object: Object | None
    revision: int
    variants: dict[str | tuple[str, bool], Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class Snapshot:
    """The objects at one point of the cache, in key order. Never changed once taken, so lists and
    any number of watchers starting between the same two changes share one (k8s clones its btree)."""

    keys: list[str]
    objects: list[Object]

    def range(self, key_prefix: str) -> tuple[int, int]:
        """The [start, end) positions of the keys under `key_prefix`."""
        start = bisect.bisect_left(self.keys, key_prefix)
        end = bisect.bisect_left(self.keys, key_prefix[:-1] + chr(ord(key_prefix[-1]) + 1), start)
        return start, end


class WatchCache:
    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.objects: dict[str, Object] = {}
        self._keys: list[str] = []  # the keys of `objects`, kept sorted as they come and go
        self._snapshot: Snapshot | None = None  # of the current state, taken when first asked for
        self.kept = KeptSnapshots()  # of past states, for the later pages of paged lists
        self.events: deque[CachedEvent] = deque(maxlen=capacity)
        self.resource_version = 0
        # The oldest revision a watch may start after; events before it are not in the ring.
        self.oldest = 0
        self._fresh = asyncio.Condition()
        self._waking = False  # a task waking the waiters of _fresh is scheduled and has not started
        # Objects written alike share one managedFields tree: a third of a small object's memory.
        self._fields = FieldsV1Sharing()

    def replace(self, objects: dict[str, Object], revision: int) -> None:
        """A new list: everything before it is unknown to watchers starting in the past."""
        for obj in objects.values():
            self._fields.share(obj)
        self.objects = objects
        self._keys = sorted(objects)
        self._snapshot = None
        self.kept.clear()
        self.events.clear()
        self.resource_version = revision
        self.oldest = revision
        self._notify()

    def process(self, event_type: str, key: str, obj: Object, revision: int) -> CachedEvent:
        prev = self.objects.get(key)
        if event_type == DELETED:
            if self.objects.pop(key, None) is not None:
                del self._keys[bisect.bisect_left(self._keys, key)]
        else:
            self._fields.share(obj)
            self.objects[key] = obj
            if prev is None:
                event_type = ADDED
                bisect.insort(self._keys, key)
        self._snapshot = None
        event = CachedEvent(event_type, key, obj, prev, revision)
        if self.events:
            # The previous event went to every watcher when it came (they hold its shared WatchEvents): the
            # ring need not keep them, nor their encodings (a JSON line per event was 40 MB for 10,000
            # ConfigMaps of 1 KiB). A watch starting before it encodes it again, as upstream's does.
            self.events[-1].variants.clear()
        if len(self.events) == self.events.maxlen:
            self.oldest = self.events[0].revision
        self.events.append(event)
        self.resource_version = revision
        self._notify()
        return event

    def snapshot(self) -> Snapshot:
        """The current objects; copies pointers only, and only once per change however many ask."""
        snapshot = self._snapshot
        if snapshot is None:
            keys = list(self._keys)
            snapshot = self._snapshot = Snapshot(keys, list(map(self.objects.__getitem__, keys)))
        return snapshot

    def snapshot_at(self, revision: int) -> Snapshot | None:
        """The objects as they were at `revision`, or None when the ring no longer holds every event
        after it (or the cache has not reached it): then only the storage's history knows."""
        if revision < self.oldest or revision > self.resource_version:
            return None
        snapshot = self.kept.get(revision, self.oldest)
        if snapshot is None:
            snapshot = self._rebuild(revision)
            self.kept.keep(revision, snapshot, self.oldest)
        return snapshot

    def keep(self, revision: int, snapshot: Snapshot) -> None:
        """Keeps the current snapshot for the later pages of a list served from it."""
        self.kept.keep(revision, snapshot, self.oldest)

    def _rebuild(self, revision: int) -> Snapshot:
        """The current objects with every change after `revision` undone: a key changed since holds
        what the first change after `revision` found there (nothing: it was created since)."""
        before: dict[str, Object | None] = {}
        for event in reversed(self.events):  # newest first, so the oldest change after `revision` wins
            if event.revision <= revision:
                break
            before[event.key] = event.prev_object
        if not before:
            return self.snapshot()
        created = {key for key, obj in before.items() if obj is None}
        keys = [key for key in self._keys if key not in created] if created else list(self._keys)
        deleted = [key for key, obj in before.items() if obj is not None and key not in self.objects]
        if deleted:
            keys.extend(sorted(deleted))
            keys.sort()  # two sorted runs: merged in linear time
        previous, current = before.get, self.objects
        return Snapshot(keys, [previous(key) or current[key] for key in keys])

    def progress(self, revision: int) -> None:
        if revision > self.resource_version:
            self.resource_version = revision
            self._notify()

    def events_after(self, revision: int) -> list[CachedEvent]:
        if revision < self.oldest:
            raise ExpiredError(f"too old resource version: {revision} ({self.oldest})")
        if not self.events or self.events[-1].revision <= revision:
            return []
        if self.events[0].revision > revision:
            return list(self.events)
        return [e for e in self.events if e.revision > revision]

    def _notify(self) -> None:
        """Wakes the waiters of _fresh once the cacher yields: one task for every event processed until then
        (a batch of a thousand), not one each; an event processed after it started schedules another."""
        if not self._waking:
            self._waking = True
            asyncio.get_running_loop().create_task(self._wake())

    async def _wake(self) -> None:
        self._waking = False
        async with self._fresh:
            self._fresh.notify_all()

    async def wait_until_fresh(self, revision: int, timeout: float) -> bool:
        """Whether the cache reached `revision` within `timeout` seconds."""
        if self.resource_version >= revision:
            return True
        async with self._fresh:
            try:
                # asyncio.timeout, not wait_for: 3.11's wait_for swallows the caller's cancellation when the
                # condition is met in the same turn, and a cancelled request (or stopping controller) runs on.
                async with asyncio.timeout(timeout):
                    await self._fresh.wait_for(lambda: self.resource_version >= revision)
            except TimeoutError:
                return False
        return True
