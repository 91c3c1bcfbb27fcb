"""A write_many of thousands of writes (a snapshot's restore) on SQLite and in memory: its writer is answered once the batch
holding its last write is durable, before the watchers take that batch's events, and every watcher still
sees every event exactly once, in revision order, with concurrent single writes interleaved; a watch
started by the answered writer sees a consistent state (history up to the answer, live events after)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kube_apiserver.storage.kv import CREATE, DELETE_KEY, KVBatch, KVEvent, Write, prefix_end
from kube_apiserver.storage.memory import MemoryKV
from kube_apiserver.storage.sqlite import SQLiteKV
from kube_apiserver.storage.sqlite.kv import MAX_BATCH

EMBEDDED = pytest.mark.parametrize("kind", [SQLiteKV, MemoryKV], ids=["sqlite", "memory"])

PREFIX = "/registry/configmaps/"
TIMEOUT = 10.0


async def collect(stream: AsyncIterator[KVBatch], through: int, into: list[KVEvent], key: str = "") -> None:
    """The stream's events until one at revision `through` or later, or one of `key`."""
    while not into or (into[-1].revision < through if not key else into[-1].key != key):
        batch = await asyncio.wait_for(anext(stream), TIMEOUT)
        into.extend(batch.events)


@EMBEDDED
def test_a_write_many_is_answered_before_its_watchers_take_its_events(tmp_path: Path, kind: type) -> None:
    async def main() -> list[str]:
        kv = await kind.open(str(tmp_path))
        order: list[str] = []
        try:
            stream = kv.watch(PREFIX, prefix_end(PREFIX), 0)

            async def watch() -> None:
                batch = await anext(stream)
                order.append(f"watcher:{len(batch.events)}")

            watching = asyncio.ensure_future(watch())
            await asyncio.sleep(0.05)  # registered
            results = await kv.write_many([Write(CREATE, f"{PREFIX}ns/{i:03d}", b"{}") for i in range(100)])
            order.append(f"writer:{sum(r.succeeded for r in results)}")
            await asyncio.wait_for(watching, TIMEOUT)
            await stream.aclose()
        finally:
            await kv.close()
        return order

    assert asyncio.run(main()) == ["writer:100", "watcher:100"]


@EMBEDDED
def test_a_big_batch_reaches_every_watcher_once_in_order_among_concurrent_writes(tmp_path: Path, kind: type) -> None:
    count = 2 * MAX_BATCH + 500  # three group-commit batches, single writes queued between them

    async def main() -> None:
        kv = await kind.open(str(tmp_path))
        try:
            start = await kv.current_revision()
            whole: list[KVEvent] = []
            part: list[KVEvent] = []
            singles = [f"{PREFIX}other/{i:02d}" for i in range(40)]
            keys = [f"{PREFIX}ns/{i:05d}" for i in range(count)]
            total = count + len(singles)
            part_prefix = f"{PREFIX}other/"
            whole_stream = kv.watch(PREFIX, prefix_end(PREFIX), start + 1)
            part_stream = kv.watch(part_prefix, prefix_end(part_prefix), start + 1)
            # Registered (an async generator starts at its first step) before anything is written: live.
            whole_first = asyncio.ensure_future(anext(whole_stream))
            part_first = asyncio.ensure_future(anext(part_stream))
            await asyncio.sleep(0.05)

            async def single_writes() -> None:
                for key in singles:
                    await kv.create(key, b"single")

            group = asyncio.ensure_future(kv.write_many([Write(CREATE, key, b"group") for key in keys]))
            await asyncio.gather(group, single_writes())
            results = group.result()
            assert all(r.succeeded for r in results)
            last = await kv.current_revision()
            assert last == start + total
            # Answered: a watch from the group's first revision replays it from the log, one from the
            # revision after the answer sees nothing old.
            after = kv.watch(PREFIX, prefix_end(PREFIX), last + 1)
            replay: list[KVEvent] = []
            await collect(kv.watch(PREFIX, prefix_end(PREFIX), start + 1), last, replay)
            whole.extend((await asyncio.wait_for(whole_first, TIMEOUT)).events)
            part.extend((await asyncio.wait_for(part_first, TIMEOUT)).events)
            await collect(whole_stream, last, whole)
            await collect(part_stream, 0, part, key=singles[-1])

            revisions = [e.revision for e in whole]
            assert revisions == list(range(start + 1, last + 1))  # each exactly once, in order, none missing
            assert [(e.key, e.revision) for e in whole] == [(e.key, e.revision) for e in replay]
            assert [r.revision for r in results] == sorted(r.revision for r in results)
            assert {e.key for e in whole} == set(keys) | set(singles)
            assert [e.key for e in part] == singles  # only its range, in the order written
            part_revisions = [e.revision for e in part]
            assert part_revisions == sorted(set(part_revisions))

            deletes = [
                Write(DELETE_KEY, key, b"", r.revision) for key, r in zip(keys[:10], results, strict=False)
            ]
            deleted = await kv.write_many(deletes)
            first_new: list[KVEvent] = []
            await collect(after, deleted[-1].revision, first_new)
            assert [(e.key, e.revision) for e in first_new] == [
                (w.key, r.revision) for w, r in zip(deletes, deleted, strict=True)
            ]
            for stream in (whole_stream, part_stream, after):
                await stream.aclose()
        finally:
            await kv.close()

    asyncio.run(main())
