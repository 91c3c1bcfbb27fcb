"""CacheWatcher: one client's watch on the cache. Events are filtered by key and selector (with the
transitions an object makes into and out of the selection) and buffered; a watcher whose buffer
overflows is closed, not waited for, so one slow client never slows the others."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from ..interface import ADDED, BOOKMARK, DELETED, MODIFIED, Object, Predicate, WatchEvent
from .watch_cache import CachedEvent

DEFAULT_BUFFER = 4096


class CacheWatcher:
    def __init__(self, key_prefix: str, predicate: Predicate | None, on_close: Callable[[CacheWatcher], None],
                 progress: Callable[[], int], buffer: int = DEFAULT_BUFFER):
        self.key_prefix = key_prefix
        self.predicate = predicate
        self.resource_version = 0  # of the last event this watcher was given
        self._buffer: deque[WatchEvent] = deque()
        self._capacity = buffer
        self._ready = asyncio.Event()
        self._closed = False
        self._on_close = on_close
        self._progress = progress

    # ---- fed by the cacher ----

    def add(self, event: CachedEvent) -> None:
        if self._closed or not event.key.startswith(self.key_prefix):
            return
        variant = self._variant(event)
        if variant is not None:
            self._push(_shared(event, *variant))
        self.resource_version = event.revision

    def _variant(self, event: CachedEvent) -> tuple[str, bool] | None:
        """(type to send, whether the object sent is the previous state)."""
        predicate = self.predicate
        if predicate is None:
            return event.type, False
        if event.type == DELETED:
            return (DELETED, False) if predicate(event.object) else None
        now = predicate(event.object)
        before = event.prev_object is not None and predicate(event.prev_object)
        if now:
            return (MODIFIED if before else ADDED), False
        return (DELETED, True) if before else None

    def push_initial(self, obj: Object, revision: int) -> None:
        if self.predicate is None or self.predicate(obj):
            self._push(WatchEvent(ADDED, obj, revision))

    def push_bookmark(self, revision: int, annotations: dict[str, str] | None = None) -> None:
        meta: dict[str, object] = {"resourceVersion": str(revision)}
        if annotations:
            meta["annotations"] = annotations
        self._push(WatchEvent(BOOKMARK, {"metadata": meta}, revision))

    def _push(self, event: WatchEvent) -> None:
        if len(self._buffer) >= self._capacity:
            self.close()  # too slow: the client re-watches from its last resourceVersion
            return
        self._buffer.append(event)
        self._ready.set()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._ready.set()
            self._on_close(self)

    # ---- read by the handler ----

    def __aiter__(self) -> CacheWatcher:
        return self

    async def __anext__(self) -> WatchEvent:
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            self._ready.clear()
            await self._ready.wait()
        return self._buffer.popleft()

    def request_bookmark(self) -> None:
        """A bookmark after every event already buffered, at the cache's current resourceVersion."""
        self.push_bookmark(max(self.resource_version, self._progress()))

    async def stop(self) -> None:
        self.close()


def _shared(event: CachedEvent, event_type: str, previous: bool) -> WatchEvent:
    key = (event_type, previous)
    shared = event.variants.get(key)
    if shared is None:
        obj = event.prev_object if previous and event.prev_object is not None else event.object
        if previous and event.type != DELETED:
            obj = {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": str(event.revision)}}
        shared = event.variants[key] = WatchEvent(event_type, obj, event.revision)
    return shared
