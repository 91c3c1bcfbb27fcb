"""CacheWatcher: one client's watch on the cache. Events are filtered by key and selector (with the
transitions an object makes into and out of the selection).

A watch first streams what it starts with (the objects of a snapshot, or the cached events after its
resourceVersion) straight from the cache at the reader's pace: that never counts against the buffer,
however large (k8s cacheWatcher.processInterval). Live events are buffered behind it; a watcher whose
buffer of live events overflows is closed, not waited for, so one slow client never slows the others.

It is read either as an async iterator, or without awaiting: `notify` names a callback called whenever
something is ready, and `take` hands over what is (a watch handler writing to its connection directly)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ..interface import ADDED, BOOKMARK, DELETED, INITIAL_EVENTS_END, MODIFIED, Object, Predicate, WatchEvent
from .watch_cache import CachedEvent

DEFAULT_BUFFER = 4096
# The initial state is served from memory without waiting: hand the loop back this often, so a reader
# taking 50,000 objects (an informer, a handler whose writes do not block) never stalls the server.
YIELD_EVERY = 256


class _Initial:
    """What a watcher starts with: items[position:end], each turned into an event (or None: skipped),
    then an optional bookmark marking their end."""

    __slots__ = ("items", "position", "end", "convert", "end_bookmark")

    def __init__(self, items: Sequence[Any], start: int, end: int,
                 convert: Callable[[Any], WatchEvent | None], end_bookmark: WatchEvent | None):
        self.items = items
        self.position = start
        self.end = end
        self.convert = convert
        self.end_bookmark = end_bookmark


class CacheWatcher:
    def __init__(self, key_prefix: str, predicate: Predicate | None, on_close: Callable[[CacheWatcher], None],
                 progress: Callable[[], int], buffer: int = DEFAULT_BUFFER):
        self.key_prefix = key_prefix
        self.predicate = predicate
        self.resource_version = 0  # of the last event this watcher was given
        self._initial: _Initial | None = None
        self._buffer: deque[WatchEvent] = deque()
        self._capacity = buffer
        self._ready = asyncio.Event()
        self._closed = False
        self._on_close = on_close
        self._progress = progress
        self._steps = 0  # initial items looked at since the loop was last handed back
        self._skip_through = 0  # events up to this revision are in what the watch started with
        self._notify: Callable[[], None] | None = None

    # ---- what it starts with ----

    def start_with_objects(self, objects: Sequence[Object], start: int, end: int, revision: int,
                           mark_end: bool) -> None:
        """objects[start:end] (a snapshot's, never changed) as ADDED at `revision`; with `mark_end`, then
        the bookmark annotated k8s.io/initial-events-end (a watch-list's)."""
        predicate = self.predicate

        def added(obj: Object) -> WatchEvent | None:
            return WatchEvent(ADDED, obj, revision) if predicate is None or predicate(obj) else None

        end_bookmark = bookmark(revision, {INITIAL_EVENTS_END: "true"}) if mark_end else None
        self._initial = _Initial(objects, start, end, added, end_bookmark)
        self.resource_version = revision

    def start_with_events(self, events: list[CachedEvent], revision: int) -> None:
        """The cached events after the watch's resourceVersion (a list of its own, the ring moves on)."""
        self._initial = _Initial(events, 0, len(events), self._convert, None)
        self.resource_version = revision

    # ---- fed by the cacher ----

    def skip_events_through(self, revision: int) -> None:
        """A watch started ahead of the cache: the events it has yet to see up to `revision` are not sent."""
        self._skip_through = revision

    def add(self, event: CachedEvent) -> None:
        """Called for every event and watcher of the cache (the fan-out's hot path: kept flat)."""
        if self._closed or event.revision <= self._skip_through or not event.key.startswith(self.key_prefix):
            return
        self.resource_version = event.revision
        if self.predicate is None:
            shared = event.variants.get(event.type)
            if shared is None:
                shared = _shared(event, event.type, False)
        else:
            variant = self._variant(event)
            if variant is None:
                return
            shared = _shared(event, *variant)
        self._push(shared)

    def _convert(self, event: CachedEvent) -> WatchEvent | None:
        if not event.key.startswith(self.key_prefix):
            return None
        variant = self._variant(event)
        return _shared(event, *variant) if variant is not None else None

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

    def push_bookmark(self, revision: int, annotations: dict[str, str] | None = None) -> None:
        self._push(bookmark(revision, annotations))

    def _push(self, event: WatchEvent) -> None:
        buffer = self._buffer
        if len(buffer) >= self._capacity:
            self.close()  # too slow: the client re-watches from its last resourceVersion
            return
        buffer.append(event)
        if self._notify is not None:
            self._notify()  # read with take(), not the iterator
        else:
            self._ready.set()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._ready.set()
            self._on_close(self)
            if self._notify is not None:
                self._notify()

    # ---- read without awaiting ----

    def notify(self, callback: Callable[[], None] | None) -> None:
        """`callback` is called, synchronously, each time an event is buffered and when the watcher closes."""
        self._notify = callback

    @property
    def pending(self) -> bool:
        """Whether `take` has more to give now."""
        return self._initial is not None or bool(self._buffer)

    @property
    def ended(self) -> bool:
        """Closed, and everything it had to give was taken."""
        return self._closed and not self.pending

    def take(self, limit: int) -> list[WatchEvent]:
        """What is ready now, in order: the initial state first (at most `limit` of its items looked at),
        then up to `limit` buffered live events. Closed before its initial state was out, it ends at once,
        as the iterator does."""
        initial = self._initial
        if initial is None:
            buffer = self._buffer
            if len(buffer) <= limit:
                events = list(buffer)
                buffer.clear()
                return events
            return [buffer.popleft() for _ in range(limit)]
        if self._closed and initial.position < initial.end:
            self._initial = None
            self._buffer.clear()
            return []
        events = []
        end = min(initial.end, initial.position + limit)
        convert = initial.convert
        for item in initial.items[initial.position:end]:
            event = convert(item)
            if event is not None:
                events.append(event)
        initial.position = end
        if end >= initial.end:
            self._initial = None
            if initial.end_bookmark is not None:
                events.append(initial.end_bookmark)
        return events

    # ---- read by the handler ----

    def __aiter__(self) -> CacheWatcher:
        return self

    async def __anext__(self) -> WatchEvent:
        if self._initial is not None:
            event = await self._next_initial()
            if event is not None:
                return event
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            self._ready.clear()
            await self._ready.wait()
        return self._buffer.popleft()

    async def _next_initial(self) -> WatchEvent | None:
        """The next event of the initial state, or None once it is all out (the live ones follow)."""
        initial = self._initial
        assert initial is not None
        while True:
            self._steps += 1
            if self._steps >= YIELD_EVERY:
                self._steps = 0
                await asyncio.sleep(0)
            if initial.position >= initial.end:
                self._initial = None
                return initial.end_bookmark
            if self._closed:
                # Closed before its initial state was out: what is buffered would follow a partial
                # state, so the stream just ends (the client starts over).
                self._initial = None
                self._buffer.clear()
                raise StopAsyncIteration
            item = initial.items[initial.position]
            initial.position += 1
            event = initial.convert(item)
            if event is not None:
                return event

    def request_bookmark(self) -> None:
        """A bookmark after every event already buffered, at the cache's current resourceVersion."""
        self.push_bookmark(max(self.resource_version, self._progress()))

    async def stop(self) -> None:
        self.close()


def bookmark(revision: int, annotations: dict[str, str] | None = None) -> WatchEvent:
    meta: dict[str, object] = {"resourceVersion": str(revision)}
    if annotations:
        meta["annotations"] = annotations
    return WatchEvent(BOOKMARK, {"metadata": meta}, revision)


def _shared(event: CachedEvent, event_type: str, previous: bool) -> WatchEvent:
    """The event as sent with this type (and the previous state's object), shared by every watcher given
    it. Keyed by the type alone for the current object: the common case looks it up without a tuple."""
    key: str | tuple[str, bool] = (event_type, True) if previous else event_type
    shared = event.variants.get(key)
    if shared is None:
        obj = event.prev_object if previous and event.prev_object is not None else event.object
        if previous and event.type != DELETED:
            obj = {**obj, "metadata": {**obj.get("metadata", {}), "resourceVersion": str(event.revision)}}
        shared = event.variants[key] = WatchEvent(event_type, obj, event.revision)
    return shared
