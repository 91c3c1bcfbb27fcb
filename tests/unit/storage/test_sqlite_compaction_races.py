"""SQLite KV: what a compaction may do to the readers and compactions that overlap it (no sleeps: the order
comes from the event loop's turns and the write connection's turns)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

import pytest

from kube_apiserver.storage.kv import CompactedError
from kube_apiserver.storage.sqlite import SQLiteKV
from kube_apiserver.storage.sqlite import kv as sqlite_kv


async def _history(kv: SQLiteKV, updates: int = 20) -> int:
    """One key created then updated `updates` times; returns the newest revision."""
    result = await kv.create("/r/k", b"0")
    revision = result.revision
    for i in range(updates):
        result = await kv.update("/r/k", str(i + 1).encode(), revision)
        revision = result.revision
    return revision


def test_a_lower_compaction_overlapping_a_higher_one_does_not_move_the_compacted_revision_back(tmp_path):
    """Two compactions at once (the storage process serves `compact` to every worker, each with its compactor):
    the lower one passed its check before the higher one marked the store compacted, then marked it compacted
    at its own revision. Reads between the two revisions were then allowed over the history the higher one
    had deleted: the key looked absent."""

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            newest = await _history(kv)
            high, low = newest - 2, newest - 10
            await asyncio.gather(kv.compact(high), kv.compact(low))
            assert await kv.compacted_revision() == high
            with pytest.raises(CompactedError):
                await kv.range("/r/", "/r0", low + 1)
        finally:
            await kv.close()

        reopened = await SQLiteKV.open(str(tmp_path))  # the database's mark too
        try:
            assert await reopened.compacted_revision() == high
        finally:
            await reopened.close()

    asyncio.run(main())


def test_a_watch_replaying_history_that_a_compaction_deletes_meanwhile_fails_compacted(tmp_path, monkeypatch):
    """A watch from the past replays the log in chunks; a compaction that starts between two chunks deletes
    what the next ones would have read. The watch went on without those events (its watcher, a watch cache
    or an informer, silently missed changes); it must end with CompactedError, as etcd cancels it."""
    monkeypatch.setattr(sqlite_kv, "HISTORY_CHUNK", 4)

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            newest = await _history(kv)
            first = newest - 20  # the create
            watch = kv.watch("/r/", "/r0", first)
            batch = await anext(watch)  # the first chunk of the history
            assert [e.revision for e in batch.events] == list(range(first, first + 4))
            await kv.compact(newest - 2)
            revisions = [e.revision for e in batch.events]
            with pytest.raises(CompactedError):
                while True:
                    batch = await anext(watch)
                    if not batch.events:  # the progress notification after the history: it was all replayed
                        break
                    revisions += [e.revision for e in batch.events]
            assert revisions == list(range(first, first + len(revisions)))  # no gap in what it was given
            await watch.aclose()
        finally:
            await kv.close()

    asyncio.run(main())


def test_a_count_at_a_compacted_revision_fails_compacted(tmp_path):
    """A paged list counts the keys left after its page at the page's revision (remainingItemCount); when a
    compaction came between the page and the count, the count read what compaction left of that revision
    (a key updated since then had no row at it any more: counted as absent) instead of failing as the range
    does, so ObjectStore._count_left never fell back to the current count."""

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            newest = await _history(kv)
            assert await kv.count("/r/", "/r0", newest - 10) == 1
            await kv.compact(newest - 2)
            with pytest.raises(CompactedError):
                await kv.range("/r/", "/r0", newest - 10)
            with pytest.raises(CompactedError):
                await kv.count("/r/", "/r0", newest - 10)
            assert await kv.count("/r/", "/r0", newest - 2) == 1
        finally:
            await kv.close()

    asyncio.run(main())


@contextlib.contextmanager
def compaction_steps_held() -> Iterator[tuple[asyncio.Event, threading.Event]]:
    """Each compaction step opens its transaction on the write connection, tells the loop (`in_step`), and
    holds it until `release` is set; then it rolls back and runs as it would."""
    plain = sqlite_kv.SQLiteKV._compact
    loop = asyncio.get_running_loop()
    in_step, release = asyncio.Event(), threading.Event()

    def held(self: SQLiteKV, *args: object) -> None:
        self._write_conn.execute("BEGIN IMMEDIATE")
        loop.call_soon_threadsafe(in_step.set)
        release.wait(10)
        self._write_conn.execute("ROLLBACK")
        plain(self, *args)

    sqlite_kv.SQLiteKV._compact = held  # type: ignore[method-assign]
    try:
        yield in_step, release
    finally:
        release.set()
        sqlite_kv.SQLiteKV._compact = plain  # type: ignore[method-assign]


def test_a_write_committed_on_the_loop_waits_for_a_compaction_step(tmp_path):
    """The storage process commits writes on its event loop (commit_on_loop) while compaction's steps run on the
    writer thread, both on the one write connection: a write must not begin its transaction inside a
    compaction step's (SQLite refuses a transaction within a transaction, and the write would fail)."""

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path), commit_on_loop=True)
        try:
            newest = await _history(kv)
            with compaction_steps_held() as (in_step, release):
                compacting = asyncio.ensure_future(kv.compact(newest))
                await in_step.wait()
                writing = asyncio.ensure_future(kv.create("/r/during", b"written"))
                for _ in range(20):  # the write loop has had the write to commit
                    await asyncio.sleep(0)
                release.set()
                await asyncio.gather(compacting, writing)
            assert (await kv.get("/r/during")).value == b"written"
        finally:
            await kv.close()

    asyncio.run(main())


def test_a_cancelled_compaction_keeps_the_write_connection_until_its_step_ends(tmp_path):
    """A compaction cancelled while its step runs on the writer thread (the storage process's compactor stopped
    at shutdown, whose store then commits the writes still queued; a worker gone while the storage process
    compacted for it) gave the write connection's turn back at once: a batch committed on the loop began its
    transaction inside the step's and failed (as the test above, through the cancellation)."""

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path), commit_on_loop=True)
        try:
            newest = await _history(kv)
            with compaction_steps_held() as (in_step, release):
                compacting = asyncio.ensure_future(kv.compact(newest - 2))
                await in_step.wait()
                compacting.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await compacting
                writing = asyncio.ensure_future(kv.create("/r/during", b"written"))
                for _ in range(20):
                    await asyncio.sleep(0)
                assert not writing.done()  # it waits for the step
                release.set()
                assert (await writing).succeeded
            assert (await kv.get("/r/during")).value == b"written"
        finally:
            await kv.close()

    asyncio.run(main())
