"""MemoryKV: the KV interface in this process's memory (--storage-backend=memory), for servers whose state
dies with them: a test's. What it holds is lost when the server stops.

The same etcd semantics as the other backends: one revision per write, compare-and-swap on a key's mod
revision, leases, ranges at a past revision, watches from any revision still in history, compaction. A
write is applied on the event loop (no thread, no disk, no encoding) and published to the watchers at once;
a write_many's batch at the loop's next turn, once its writer went on with the answer. The history is a log
of every write since the compacted revision; each entry keeps the state it replaced, so a range at a past
revision undoes the newer entries, and a compaction drops a prefix.

A data directory that holds an SQLite database (a template's, see kube_apiserver.testing.Template) is the
starting state; its history is not read, so the store starts compacted at that database's revision."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from .. import kv
from ..datadir import claim
from ..kv import DELETE, PUT, KeyValue, KVBatch, KVEvent, RangeResult, TxnResult
from ..sqlite.kv import STATE_FILE, read_state
from ..watchers import Watchers, watch

MAX_BATCH = 1000  # events published together, as SQLite's group commit does
HISTORY_CHUNK = 1000  # events per batch of a watch's replay
MAX_EXPIRED = 1000  # keys deleted per lease check


@dataclass(slots=True, frozen=True)
class _Entry:
    """One write of the log: its event, and what the key held before it (None: absent)."""

    event: KVEvent
    previous: KeyValue | None


def _revision_of(entry: _Entry) -> int:
    return entry.event.revision


class MemoryKV:
    exclusive = True  # in one process only: no other replica shares it

    def __init__(self, state: Iterable[KeyValue] = (), revision: int = 1, lock_fd: int | None = None):
        self._current = {item.key: item for item in state}
        self._keys = sorted(self._current)  # kept sorted: ranges are two bisections
        self._log: list[_Entry] = []
        self._leases: dict[str, float] = {}  # key -> when it expires (time.time())
        self._revision = revision
        # A store that starts past revision 1 started from a database whose history was not read.
        self._compacted = revision if revision > 1 else 0
        self._watchers = Watchers()
        self._published = revision  # the newest revision handed to the watchers
        # Batches (and progress requests, None) a write_many's writer was answered for before the watchers
        # are handed them, at the loop's next turn; every later publish queues behind them, in order.
        self._deferred: list[list[KVEvent] | None] = []
        self._lock_fd = lock_fd
        self._closed = False

    @classmethod
    async def open(cls, data_dir: str) -> MemoryKV:
        """An empty store, or one holding what the directory's database holds."""
        lock_fd = claim(data_dir)
        path = os.path.join(data_dir, STATE_FILE)
        try:
            state, revision = read_state(path) if os.path.exists(path) else ([], 1)
        except BaseException:
            os.close(lock_fd)
            raise
        return cls(state, revision, lock_fd)

    # ---- writes ----

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        return self._write_one(kv.CREATE, key, value, 0, ttl)

    async def update(self, key: str, value: bytes, expected_mod_revision: int, ttl: float = 0) -> TxnResult:
        return self._write_one(kv.UPDATE, key, value, expected_mod_revision, ttl)

    async def delete(self, key: str, expected_mod_revision: int) -> TxnResult:
        return self._write_one(kv.DELETE_KEY, key, b"", expected_mod_revision, 0)

    async def write_many(self, writes: list[kv.Write]) -> list[TxnResult]:
        """The writes in order, each compared with what the ones before it left; their events published
        MAX_BATCH at a time."""
        self._check_open()
        results: list[TxnResult] = []
        events: list[KVEvent] = []
        for write in writes:
            result, event = self._apply(write.kind, write.key, write.value, write.expected_mod_revision, write.ttl)
            results.append(result)
            if event is not None:
                events.append(event)
        for i in range(0, len(events), MAX_BATCH):
            self._publish(events[i : i + MAX_BATCH], defer=True)
        return results

    def _write_one(self, kind: str, key: str, value: bytes, expected: int, ttl: float) -> TxnResult:
        self._check_open()
        result, event = self._apply(kind, key, value, expected, ttl)
        if event is not None:
            self._publish([event])
        return result

    def _publish(self, events: list[KVEvent] | None, defer: bool = False) -> None:
        """The events to the watchers (None: a progress notification); at the loop's next turn when `defer`
        (a write_many's: its writer goes on first, as SQLite answers it before the watchers take a batch) or
        when a deferred batch is still waiting, so that watchers get everything in revision order."""
        if defer or self._deferred:
            if not self._deferred:
                asyncio.get_running_loop().call_soon(self._flush)
            self._deferred.append(events)
        else:
            self._hand_over(events)

    def _flush(self) -> None:
        deferred, self._deferred = self._deferred, []
        for events in deferred:
            if self._closed:
                return
            self._hand_over(events)

    def _hand_over(self, events: list[KVEvent] | None) -> None:
        if events is None:
            self._watchers.progress(self._published)
        else:
            self._watchers.publish(events)
            self._published = events[-1].revision

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("storage is closed")

    def _apply(self, kind: str, key: str, value: bytes, expected: int, ttl: float,
               ) -> tuple[TxnResult, KVEvent | None]:
        """The write's compare-and-swap, and when it holds, the write itself: the key's new state, its log
        entry and lease."""
        current = self._current.get(key)
        if kind == kv.CREATE:
            if current is not None:
                return TxnResult(False, self._revision, current), None
        elif current is None or (expected and current.mod_revision != expected):
            return TxnResult(False, self._revision, current), None
        self._revision = revision = self._revision + 1
        if kind == kv.DELETE_KEY:
            assert current is not None
            event = KVEvent(DELETE, key, b"", revision, current.create_revision, current.value)
            del self._current[key]
            del self._keys[bisect.bisect_left(self._keys, key)]
            self._leases.pop(key, None)
        else:
            create_revision = revision if current is None else current.create_revision
            event = KVEvent(PUT, key, value, revision, create_revision, None if current is None else current.value)
            self._current[key] = KeyValue(key, value, create_revision, revision)
            if current is None:
                bisect.insort(self._keys, key)
            if ttl > 0:
                self._leases[key] = time.time() + ttl
            else:
                self._leases.pop(key, None)
        self._log.append(_Entry(event, current))
        return TxnResult(True, revision, None), event

    async def expire_leases(self) -> int:
        """Deletes every key whose lease has expired; watchers see DELETED events. Returns how many."""
        now = time.time()
        expired = [key for key, expires in self._leases.items() if expires <= now][:MAX_EXPIRED]
        writes = [kv.Write(kv.DELETE_KEY, key, b"", self._current[key].mod_revision) for key in expired]
        results = await self.write_many(writes)
        return sum(1 for r in results if r.succeeded)

    # ---- reads ----

    async def get(self, key: str) -> KeyValue | None:
        return self._current.get(key)

    async def range(self, start: str, end: str, revision: int = 0, limit: int = 0) -> RangeResult:
        items = self._items(start, end, revision)
        more = 0 < limit < len(items)
        return RangeResult(items[:limit] if more else items, revision if revision > 0 else self._revision, more)

    async def count(self, start: str, end: str, revision: int = 0) -> int:
        if revision <= 0:
            return bisect.bisect_left(self._keys, end) - bisect.bisect_left(self._keys, start)
        return len(self._items(start, end, revision))

    def _items(self, start: str, end: str, revision: int) -> list[KeyValue]:
        """The keys in [start, end) as of `revision` (0: now), in order."""
        if revision > 0:
            if revision < self._compacted:
                raise kv.CompactedError(revision, self._compacted)
            if revision > self._revision:
                raise kv.FutureRevisionError(revision, self._revision)
        keys = self._keys[bisect.bisect_left(self._keys, start) : bisect.bisect_left(self._keys, end)]
        if revision <= 0 or revision == self._revision:
            return [self._current[key] for key in keys]
        return self._items_at(keys, start, end, revision)

    def _items_at(self, keys: list[str], start: str, end: str, revision: int) -> list[KeyValue]:
        """Undoes, newest first, the log's writes after `revision` in the range."""
        undone: dict[str, KeyValue | None] = {}
        first_after = bisect.bisect_right(self._log, revision, key=_revision_of)
        for entry in reversed(self._log[first_after:]):
            key = entry.event.key
            if start <= key < end:
                undone[key] = entry.previous
        state = {key: self._current[key] for key in keys}
        for key, previous in undone.items():
            if previous is None:
                state.pop(key, None)
            else:
                state[key] = previous
        return [state[key] for key in sorted(state)]

    async def current_revision(self) -> int:
        return self._revision

    async def compacted_revision(self) -> int:
        return self._compacted

    async def compact(self, revision: int) -> None:
        """As etcd compacts: reads and watches before `revision` fail with CompactedError from now on, and
        the history up to it is dropped."""
        revision = min(revision, self._revision)
        if revision <= self._compacted:
            return
        self._compacted = revision
        del self._log[: bisect.bisect_right(self._log, revision, key=_revision_of)]

    # ---- watch ----

    def watch(self, start: str, end: str, start_revision: int) -> AsyncIterator[KVBatch]:
        # published, not written: the batches still deferred reach the watch live
        revisions = lambda: (self._published, self._compacted)  # noqa: E731 - read at its first step
        return watch(self._watchers, start, end, start_revision, revisions, self._history)

    async def _history(self, start: str, end: str, first: int, last: int) -> AsyncIterator[list[KVEvent]]:
        """The log's events in [first, last] on keys in the range, HISTORY_CHUNK at a time (read at once:
        a compaction meanwhile does not cut the replay)."""
        entries = self._log[bisect.bisect_left(self._log, first, key=_revision_of) :]
        events = [e.event for e in entries if e.event.revision <= last and start <= e.event.key < end]
        for i in range(0, len(events), HISTORY_CHUNK):
            yield events[i : i + HISTORY_CHUNK]

    def request_progress(self) -> None:
        self._publish(None)  # behind whatever is still deferred

    @property
    def progress_requests_supported(self) -> bool:
        return True  # the notification is queued behind every event already written

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._watchers.close()
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None
