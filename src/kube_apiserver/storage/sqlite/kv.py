"""SQLiteKV: the KV interface on one SQLite database.

Writes are queued and committed by one writer thread in batches (group commit): while one batch
is being made durable the next one gathers, so N concurrent writers share one fsync. A write is
acknowledged only after its batch committed. Watchers are fed in memory after each commit; a
watch that starts in the past first replays the log from the database."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .. import kv
from ..datadir import StorageOpenError, claim
from ..kv import DELETE, PUT, KeyValue, KVBatch, KVEvent, RangeResult, TxnResult
from ..watchers import Watchers, watch
from . import schema

CREATE, UPDATE, REMOVE = 0, 1, 2
_KINDS = {kv.CREATE: CREATE, kv.UPDATE: UPDATE, kv.DELETE_KEY: REMOVE}
HISTORY_CHUNK = 1000
MAX_BATCH = 1000
MAX_INT64 = (1 << 63) - 1  # SQLite's integers
COMPACT_BATCH_REVISIONS = 5_000  # a transaction takes tens of milliseconds
STATE_FILE = "state.db"
SELECT_CHUNK = 512  # keys per query reading a batch's rows (SQLite bounds a statement's parameters)
ROW_CACHE_BYTES = 4 << 20  # values of the current rows kept in memory for point reads


@dataclass(slots=True, eq=False)
class _Group:
    """The writes of one write_many: one future for all of them, set when the last one is committed."""

    future: asyncio.Future[list[TxnResult]]
    results: list[TxnResult | None]
    remaining: int

    def resolve(self, index: int, result: TxnResult) -> None:
        self.results[index] = result
        self.remaining -= 1
        if self.remaining == 0 and not self.future.done():
            self.future.set_result(self.results)  # type: ignore[arg-type]  # every slot is filled now

    def fail(self, err: Exception) -> None:
        if not self.future.done():
            self.future.set_exception(err)


@dataclass(slots=True)
class _Op:
    kind: int
    key: str
    value: bytes
    expected: int
    future: asyncio.Future[TxnResult] | None  # a write of its own; None for one of a write_many
    ttl: float = 0.0  # seconds; 0: no lease
    group: _Group | None = None
    index: int = 0  # its place in the group's results


class RowCache:
    """The current rows of the keys last read or written, up to `budget` bytes of values (least recently used
    first out). The store is its database's only writer, so it knows each change: a point read (the
    namespace an admission plugin checks, the object an update starts from) is a dictionary lookup instead
    of a query, which costs tens of microseconds once the writer's last commit has reset the reading
    connection's page cache (WAL mode drops it when another connection has written)."""

    def __init__(self, budget: int | None = None):
        self.budget = ROW_CACHE_BYTES if budget is None else budget
        self.size = 0
        self.rows: OrderedDict[str, KeyValue] = OrderedDict()

    def get(self, key: str) -> KeyValue | None:
        row = self.rows.get(key)
        if row is not None:
            self.rows.move_to_end(key)
        return row

    def put(self, key: str, row: KeyValue | None) -> None:
        """Records the key's current row (None: it is gone)."""
        old = self.rows.pop(key, None)
        if old is not None:
            self.size -= len(old.value)
        if row is None or len(row.value) > self.budget // 16:  # a huge value would push out many small ones
            return
        self.rows[key] = row
        self.size += len(row.value)
        while self.size > self.budget:
            self.size -= len(self.rows.popitem(last=False)[1].value)

    def apply(self, events: list[KVEvent]) -> None:
        for event in events:
            self.put(event.key, KeyValue(event.key, event.value, event.create_revision, event.revision)
                     if event.type == PUT else None)


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for pragma in schema.PRAGMAS:
        conn.execute(pragma)
    return conn


def _kv(row: tuple | None) -> KeyValue | None:
    return KeyValue(row[0], row[1], row[2], row[3]) if row else None


class SQLiteKV:
    exclusive = True  # its file is locked: one process serves from it, no other replica

    def __init__(self, path: str, lock_fd: int | None = None):
        self.path = path
        self._lock_fd = lock_fd
        # A batch commits on the event loop's thread where the loop has nothing to do meanwhile (--workers'
        # storage process serves only the store): the thread hop each way costs more CPU than it frees.
        self.commit_on_loop = False
        try:
            self._write_conn = _connect(path)
            for statement in schema.TABLES:
                self._write_conn.execute(statement)
            self._read_conn = _connect(path)
            self._loop_conn = _connect(path)  # point reads on the event loop thread: cheaper than a thread hop
            self._revision = self._write_conn.execute(schema.SELECT_REVISION).fetchone()[0]
            self._compacted = self._write_conn.execute(schema.SELECT_COMPACTED).fetchone()[0]
        except sqlite3.Error as err:  # corrupt, unreadable, read-only: say which file, not a traceback
            self._release_lock()
            raise StorageOpenError(f"unable to open the database {path}: {err}") from None
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="sqlite-reader")
        self._pending: list[_Op] = []
        self._wakeup = asyncio.Event()
        self._watchers = Watchers()
        self._rows = RowCache()
        self._committing = False  # a batch is on the writer thread: committed, maybe, but not published
        # The write connection holds one transaction at a time: a batch's (on the loop or the writer thread)
        # or a compaction step's (on the writer thread).
        self._write_turn = asyncio.Lock()
        # One compaction at a time: one that overlapped another could mark the store compacted at a lower
        # revision than the other had, over the history the other deleted.
        self._compaction = asyncio.Lock()
        self._progress_asked = False  # a progress request came meanwhile: answered again once it is
        self._closed = False
        self._write_task = asyncio.get_running_loop().create_task(self._write_loop())

    @classmethod
    async def open(cls, data_dir: str, commit_on_loop: bool = False) -> SQLiteKV:
        kv = cls(os.path.join(data_dir, STATE_FILE), claim(data_dir))
        kv.commit_on_loop = commit_on_loop
        return kv

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None

    # ---- writes (group commit) ----

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        return await self._submit(CREATE, key, value, 0, ttl)

    async def update(self, key: str, value: bytes, expected_mod_revision: int, ttl: float = 0) -> TxnResult:
        return await self._submit(UPDATE, key, value, expected_mod_revision, ttl)

    async def delete(self, key: str, expected_mod_revision: int) -> TxnResult:
        return await self._submit(REMOVE, key, b"", expected_mod_revision)

    async def write_many(self, writes: list[kv.Write]) -> list[TxnResult]:
        """The writes queued together, in order: they commit in the same group-commit batch (MAX_BATCH at a
        time), each compared with what the ones before it left, with one future for all of them (not a
        future per write and a gather of a thousand). The writer is answered as soon as the last batch
        holding them is durable, before the watchers are handed its events (see _write_loop)."""
        if self._closed:
            raise RuntimeError("storage is closed")
        if not writes:
            return []
        group = _Group(asyncio.get_running_loop().create_future(), [None] * len(writes), len(writes))
        self._pending.extend(
            _Op(_KINDS[w.kind], w.key, w.value, w.expected_mod_revision, None, w.ttl, group, index)
            for index, w in enumerate(writes)
        )
        self._wakeup.set()
        return await group.future

    def _submit(self, kind: int, key: str, value: bytes, expected: int, ttl: float = 0,
                ) -> asyncio.Future[TxnResult]:
        if self._closed:
            raise RuntimeError("storage is closed")
        future: asyncio.Future[TxnResult] = asyncio.get_running_loop().create_future()
        self._pending.append(_Op(kind, key, value, expected, future, ttl))
        self._wakeup.set()
        return future

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._pending:
                batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
                self._committing = True
                try:
                    async with self._write_turn:
                        results, events, revision = await self._commit_batch(loop, batch)
                except Exception as err:  # noqa: BLE001 - every waiter of the batch gets the failure
                    _fail(batch, err)
                    continue
                finally:
                    self._committing = False
                self._revision = revision
                self._rows.apply(events)  # before any answer: a GET after a write's answer reads what it wrote
                # All in this one turn of the loop, so no later batch's events can come first and a watch
                # started by an answered writer finds the batch published (or in the log). Only the order
                # of the wake-ups differs: a write_many's writer (a restore of a thousand keys) is woken
                # before the watchers, so its answer does not wait for every watch cache and informer to
                # take the batch; a single write's after them, as before (its writer may read the watch
                # cache at once).
                _answer(batch, results, grouped=True)
                self._watchers.publish(events)
                if self._progress_asked:
                    self._progress_asked = False
                    self.request_progress()
                _answer(batch, results, grouped=False)
            if self._closed:
                return

    async def _commit_batch(self, loop: asyncio.AbstractEventLoop, batch: list[_Op],
                            ) -> tuple[list[TxnResult], list[KVEvent], int]:
        if self.commit_on_loop:
            return self._commit(batch, self._revision)
        return await loop.run_in_executor(self._writer, self._commit, batch, self._revision)

    def _commit(self, batch: list[_Op], revision: int) -> tuple[list[TxnResult], list[KVEvent], int]:
        """The batch in one transaction, each write checked against the state the ones before it left. The
        keys' rows are read with one query and written with one statement each kind (executemany): a write
        costs a few microseconds of SQLite instead of four statements' round trips (a restore of a snapshot
        submits a thousand at once)."""
        cur = self._write_conn.cursor()
        now = time.time()
        cur.execute("BEGIN IMMEDIATE")
        try:
            state = self._current_of(cur, {op.key for op in batch})
            changed: dict[str, _Op] = {}  # key -> the last write that went through
            results: list[TxnResult] = []
            events: list[KVEvent] = []
            log_rows: list[tuple] = []
            for op in batch:
                current = state.get(op.key)
                result, event, row = self._apply(op, current, revision + 1)
                if event is not None:
                    revision += 1
                    events.append(event)
                    log_rows.append(row)
                    state[op.key] = None if op.kind == REMOVE else KeyValue(op.key, op.value,
                                                                              event.create_revision, revision)
                    changed[op.key] = op
                results.append(result if event is None else TxnResult(True, revision, None))
            self._store(cur, log_rows, state, changed, now)
            cur.execute(schema.SET_REVISION, (revision,))
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return results, events, revision

    @staticmethod
    def _current_of(cur: sqlite3.Cursor, keys: set[str]) -> dict[str, KeyValue | None]:
        state: dict[str, KeyValue | None] = dict.fromkeys(keys)
        ordered = sorted(keys)
        for i in range(0, len(ordered), SELECT_CHUNK):
            chunk = ordered[i:i + SELECT_CHUNK]
            # Padded to a power of two with its last key: a few statement texts, all kept in the connection's
            # cache of prepared statements, whatever the batches' sizes.
            chunk += chunk[-1:] * ((1 << (len(chunk) - 1).bit_length()) - len(chunk))
            for row in cur.execute(schema.select_current_of(len(chunk)), chunk):
                state[row[0]] = _kv(row)
        return state

    @staticmethod
    def _store(cur: sqlite3.Cursor, log_rows: list[tuple], state: dict[str, KeyValue | None],
               changed: dict[str, _Op], now: float) -> None:
        """The log rows, then each changed key's final row and lease: every write sets the key's lease anew
        (or drops it), as a put with or without a lease does."""
        cur.executemany(schema.INSERT_LOG, log_rows)
        gone = [(key,) for key in changed if state[key] is None]
        cur.executemany(schema.DELETE_CURRENT, gone)
        cur.executemany(schema.UPSERT_CURRENT, [(kv.key, kv.mod_revision, kv.create_revision, kv.value)
                                                for key in changed if (kv := state[key]) is not None])
        leased = [(key, now + op.ttl) for key, op in changed.items() if op.kind != REMOVE and op.ttl > 0]
        cur.executemany(schema.UPSERT_LEASE, leased)
        cur.executemany(schema.DELETE_LEASE, [(key,) for key, op in changed.items()
                                              if op.kind == REMOVE or op.ttl <= 0])

    async def expire_leases(self) -> int:
        """Deletes every key whose lease has expired; watchers see DELETED events. Returns how many."""
        loop = asyncio.get_running_loop()
        rows = await loop.run_in_executor(self._reader, self._expired, time.time())
        results = await asyncio.gather(*(self.delete(key, rev) for key, rev in rows))
        return sum(1 for r in results if r.succeeded)

    def _expired(self, now: float) -> list[tuple[str, int]]:
        return self._read_conn.execute(schema.EXPIRED_LEASES, (now,)).fetchall()

    @staticmethod
    def _apply(op: _Op, current: KeyValue | None, rev: int) -> tuple[TxnResult, KVEvent | None, tuple]:
        """What the write does to a key holding `current`: its result, its event and log row (none when
        its comparison fails)."""
        failed = TxnResult(False, rev - 1, current)
        if op.kind == CREATE:
            if current is not None:
                return failed, None, ()
            return failed, KVEvent(PUT, op.key, op.value, rev, rev, None), (rev, op.key, rev, 0, 0, op.value)
        if current is None or (op.expected and current.mod_revision != op.expected):
            return failed, None, ()
        if op.kind == UPDATE:
            row = (rev, op.key, current.create_revision, current.mod_revision, 0, op.value)
            return failed, KVEvent(PUT, op.key, op.value, rev, current.create_revision, current.value), row
        row = (rev, op.key, current.create_revision, current.mod_revision, 1, current.value)
        return failed, KVEvent(DELETE, op.key, b"", rev, current.create_revision, current.value), row

    # ---- reads ----

    async def get(self, key: str) -> KeyValue | None:
        row = self._rows.get(key)
        if row is None:
            # A batch committed on the writer thread but not yet taken by the write loop may be read here; the
            # loop records it in the cache right after, so the cache never goes back to an older row.
            row = _kv(self._loop_conn.execute(schema.SELECT_CURRENT, (key,)).fetchone())
            if row is not None:
                self._rows.put(key, row)
        return row

    async def range(self, start: str, end: str, revision: int = 0, limit: int = 0) -> RangeResult:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reader, self._range, start, end, revision, limit)

    def _range(self, start: str, end: str, revision: int, limit: int) -> RangeResult:
        cur = self._read_conn.cursor()
        cur.execute("BEGIN")
        try:
            current = cur.execute(schema.SELECT_REVISION).fetchone()[0]
            # One more row than the page tells whether there are more; the largest int64 limit fetches all.
            fetch = limit + 1 if 0 < limit < MAX_INT64 else -1
            if revision <= 0:
                rows = cur.execute(schema.RANGE_CURRENT, (start, end, fetch)).fetchall()
            else:
                self._check_revision(cur, revision, current)
                rows = cur.execute(schema.RANGE_AT_REVISION, (start, end, revision, fetch)).fetchall()
        finally:
            cur.execute("COMMIT")
        more = limit > 0 and len(rows) > limit
        if more:
            rows = rows[:limit]
        return RangeResult([KeyValue(r[0], r[1], r[2], r[3]) for r in rows], revision or current, more)

    async def count(self, start: str, end: str, revision: int = 0) -> int:
        if revision <= 0:
            return self._loop_conn.execute(schema.COUNT_CURRENT, (start, end)).fetchone()[0]
        loop = asyncio.get_running_loop()  # history is read off the loop, as a range of it is
        return await loop.run_in_executor(self._reader, self._count_at, start, end, revision)

    def _count_at(self, start: str, end: str, revision: int) -> int:
        cur = self._read_conn.cursor()
        cur.execute("BEGIN")
        try:
            self._check_revision(cur, revision, cur.execute(schema.SELECT_REVISION).fetchone()[0])
            return cur.execute(schema.COUNT_AT_REVISION, (start, end, revision)).fetchone()[0]
        finally:
            cur.execute("COMMIT")

    @staticmethod
    def _check_revision(cur: sqlite3.Cursor, revision: int, current: int) -> None:
        """A read at `revision` (a range or a count), in the transaction `cur` holds: refused when compacted
        (what is left of it is not its state) or still to come."""
        compacted = cur.execute(schema.SELECT_COMPACTED).fetchone()[0]
        if revision < compacted:
            raise kv.CompactedError(revision, compacted)
        if revision > current:
            raise kv.FutureRevisionError(revision, current)

    async def current_revision(self) -> int:
        """The newest committed revision, as the database's readers see it (etcd's header revision). A
        batch is visible to reads from its commit on, before the write loop's next turn publishes its
        revision (`_revision`) to watchers: a consistent read must wait for that, or it could be older than
        a GET that came before it."""
        return self._loop_conn.execute(schema.SELECT_REVISION).fetchone()[0]

    async def compacted_revision(self) -> int:
        return self._compacted

    # ---- watch ----

    def watch(self, start: str, end: str, start_revision: int) -> AsyncIterator[KVBatch]:
        revisions = lambda: (self._revision, self._compacted)  # noqa: E731 - read at its first step
        return watch(self._watchers, start, end, start_revision, revisions, self._history)

    async def _history(self, start: str, end: str, first: int, last: int) -> AsyncIterator[list[KVEvent]]:
        loop = asyncio.get_running_loop()
        while first <= last:
            rows = await loop.run_in_executor(self._reader, self._history_rows, start, end, first, last)
            if first <= self._compacted:  # a compaction began meanwhile: its steps may have deleted some of these
                raise kv.CompactedError(first, self._compacted)
            if not rows:
                return
            yield [_history_event(row) for row in rows]
            first = rows[-1][0] + 1

    def _history_rows(self, start: str, end: str, first: int, last: int) -> list[tuple]:
        return self._read_conn.execute(schema.HISTORY, (first, last, start, end, HISTORY_CHUNK)).fetchall()

    def request_progress(self) -> None:
        # A batch being committed may be what the asker waits for (current_revision counts it as soon as
        # it is committed): it is answered again when that batch is published, not a poll later.
        if self._committing:
            self._progress_asked = True
        self._watchers.progress(self._revision)

    @property
    def progress_requests_supported(self) -> bool:
        return True  # the notification is queued behind every batch already published

    # ---- maintenance ----

    async def compact(self, revision: int) -> None:
        """As etcd compacts: the revision is compacted at once (reads before it fail with CompactedError), and
        the history before it is deleted in batches of COMPACT_BATCH_REVISIONS revisions, each its own
        transaction on the writer thread, so writes that come meanwhile are committed between batches instead
        of waiting for all of it (a second for a few hundred thousand revisions)."""
        async with self._compaction:  # checked once the one before it is done: never back below it
            revision = min(revision, self._revision)
            if revision <= self._compacted:
                return
            start = self._compacted
            await self._compact_step(start, start, revision)
            self._compacted = revision
            for low in range(start, revision, COMPACT_BATCH_REVISIONS):
                await self._compact_step(low, min(low + COMPACT_BATCH_REVISIONS, revision), revision)

    async def _compact_step(self, low: int, high: int, revision: int) -> None:
        """One step on the writer thread, in the write connection's turn until the step ends: a cancelled
        compaction (its compactor stopped, the worker that asked gone) stops waiting for the step, not the
        step, so the turn is given back when the step is done, not at the cancellation."""
        await self._write_turn.acquire()
        try:
            step = asyncio.get_running_loop().run_in_executor(self._writer, self._compact, low, high, revision)
        except BaseException:
            self._write_turn.release()
            raise
        step.add_done_callback(self._step_done)
        await asyncio.shield(step)

    def _step_done(self, step: asyncio.Future[None]) -> None:
        self._write_turn.release()
        if not step.cancelled():
            step.exception()  # seen: a cancelled compaction's caller no longer waits for it

    def _compact(self, low: int, high: int, revision: int) -> None:
        """Deletes what compacting at `revision` drops among the revisions in (low, high]; marks the store
        compacted at `revision` when the range is empty (the first step)."""
        cur = self._write_conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            if low == high:
                cur.execute(schema.SET_COMPACTED, (revision,))
            else:
                cur.execute(schema.COMPACT, (low, high, revision))
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._wakeup.set()
        await self._write_task
        self._watchers.close()
        self._writer.shutdown(wait=True)
        self._reader.shutdown(wait=True)
        for conn in (self._write_conn, self._read_conn, self._loop_conn):
            conn.close()
        self._release_lock()


def _answer(batch: list[_Op], results: list[TxnResult], grouped: bool) -> None:
    """Sets the results of the batch's writes of a write_many (grouped) or of the others."""
    for op, result in zip(batch, results, strict=True):
        group = op.group
        if group is None:
            if not grouped and op.future is not None and not op.future.done():
                op.future.set_result(result)
        elif grouped:
            group.resolve(op.index, result)


def _fail(batch: list[_Op], err: Exception) -> None:
    for op in batch:
        if op.group is not None:
            op.group.fail(err)
        elif op.future is not None and not op.future.done():
            op.future.set_exception(err)


def _history_event(row: tuple) -> KVEvent:
    rev, key, create_rev, deleted, value, prev = row
    if deleted:
        return KVEvent(DELETE, key, b"", rev, create_rev, value)
    return KVEvent(PUT, key, value, rev, create_rev, prev)


def read_state(path: str) -> tuple[list[KeyValue], int]:
    """Every key of the database at `path` and its revision, read without locking or changing it (another
    store starts from what a template holds)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(schema.RANGE_CURRENT, ("", "\U0010ffff", -1)).fetchall()
        revision = conn.execute(schema.SELECT_REVISION).fetchone()[0]
    except sqlite3.Error as err:
        raise StorageOpenError(f"unable to read the database {path}: {err}") from None
    finally:
        conn.close()
    return [KeyValue(r[0], r[1], r[2], r[3]) for r in rows], revision
