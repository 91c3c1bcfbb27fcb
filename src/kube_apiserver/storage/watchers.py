"""The watchers of an embedded KV (SQLite, memory): each a queue of the batches in its key range, fed in
memory as writes are published. A backend replays its own history to a watch that starts in the past; what
comes after is this module's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from .kv import CompactedError, KVBatch, KVEvent


@dataclass(slots=True, eq=False)
class Watcher:
    start: str
    end: str
    queue: asyncio.Queue[KVBatch | None] = field(default_factory=asyncio.Queue)


class Watchers:
    def __init__(self) -> None:
        self._watchers: set[Watcher] = set()

    def add(self, start: str, end: str) -> Watcher:
        watcher = Watcher(start, end)
        self._watchers.add(watcher)
        return watcher

    def remove(self, watcher: Watcher) -> None:
        self._watchers.discard(watcher)

    def publish(self, events: list[KVEvent]) -> None:
        """Each watcher gets the batch's events in its range. Every resource's watch cache and informer
        watches here, so a write is compared with each range once (its keys' bounds), not per event."""
        if not events:
            return
        revision = events[-1].revision
        first = min(e.key for e in events) if len(events) > 1 else events[0].key
        last = max(e.key for e in events) if len(events) > 1 else first
        for watcher in self._watchers:
            if last < watcher.start or watcher.end <= first:
                continue  # no key of the batch in the range: the usual case
            if watcher.start <= first and last < watcher.end:
                matching = events  # read-only for every receiver: shared, not copied
            else:
                matching = [e for e in events if watcher.start <= e.key < watcher.end]
            if matching:
                watcher.queue.put_nowait(KVBatch(matching, revision))

    def progress(self, revision: int) -> None:
        """A progress notification at `revision` to every watcher, after what each holds."""
        for watcher in self._watchers:
            watcher.queue.put_nowait(KVBatch([], revision))

    def close(self) -> None:
        for watcher in self._watchers:
            watcher.queue.put_nowait(None)


History = Callable[[str, str, int, int], AsyncIterator[list[KVEvent]]]  # start, end, first, last revision
Revisions = Callable[[], tuple[int, int]]  # the newest revision handed to the watchers, the compacted one


async def watch(watchers: Watchers, start: str, end: str, start_revision: int, revisions: Revisions,
                history: History) -> AsyncIterator[KVBatch]:
    """A KV's watch, from its first step on: refused when `start_revision` is compacted; else the history from
    it up to the newest revision handed to the watchers then a progress notification at that revision, then
    what is published after."""
    published, compacted = revisions()
    if 0 < start_revision <= compacted:
        raise CompactedError(start_revision, compacted)
    watcher = watchers.add(start, end)
    try:
        if 0 < start_revision <= published:
            async for events in history(start, end, start_revision, published):
                yield KVBatch(events, events[-1].revision)
            yield KVBatch([], published)
        async for batch in follow(watcher, start_revision, published):
            yield batch
    finally:
        watchers.remove(watcher)


async def follow(watcher: Watcher, start_revision: int, published: int) -> AsyncIterator[KVBatch]:
    """What the watcher is given after the history replayed to it (up to `published`); events before
    `start_revision` (a watch from the future) are left out. Ends when the KV closes."""
    while True:
        batch = await watcher.queue.get()
        if batch is None:
            return
        if start_revision > published and batch.events:
            events = [e for e in batch.events if e.revision >= start_revision]
            if not events:
                continue
            batch = KVBatch(events, batch.revision)
        yield batch
