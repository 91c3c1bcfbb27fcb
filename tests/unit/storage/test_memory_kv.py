"""MemoryKV beyond the KV contract (test_kv_contract.py runs that on it): the state it starts from, ranges at
past revisions rebuilt from its log, and the history a compaction drops."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kube_apiserver.storage import kv as kvs
from kube_apiserver.storage.datadir import StorageOpenError
from kube_apiserver.storage.kv import PUT, CompactedError, prefix_end
from kube_apiserver.storage.memory import MemoryKV
from kube_apiserver.storage.sqlite import SQLiteKV

P = "/registry/configmaps/ns/"
END = prefix_end(P)


def run(coro):  # noqa: ANN001, ANN201 - a test's body
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_it_starts_from_the_data_dirs_database_compacted_at_its_revision(tmp_path: Path) -> None:
    async def main() -> None:
        sqlite = await SQLiteKV.open(str(tmp_path))
        a = await sqlite.create(P + "a", b"a1")
        b = await sqlite.create(P + "b", b"b1")
        await sqlite.update(P + "a", b"a2", a.revision)
        await sqlite.close()

        kv = await MemoryKV.open(str(tmp_path))
        try:
            listed = await kv.range(P, END)
            assert [(i.key, i.value, i.create_revision) for i in listed.kvs] == [
                (P + "a", b"a2", a.revision), (P + "b", b"b1", b.revision)]
            assert listed.revision == await kv.current_revision() == b.revision + 1
            assert await kv.compacted_revision() == b.revision + 1
            with pytest.raises(CompactedError):
                await anext(kv.watch(P, END, b.revision))  # its history was not read
            stream = kv.watch(P, END, b.revision + 2)
            created = await kv.create(P + "c", b"c1")
            assert created.revision == b.revision + 2
            batch = await anext(stream)
            assert [(e.type, e.key) for e in batch.events] == [(PUT, P + "c")]
            await stream.aclose()
        finally:
            await kv.close()
        # nothing was written back: the database holds what it held
        sqlite = await SQLiteKV.open(str(tmp_path))
        assert [i.key for i in (await sqlite.range(P, END)).kvs] == [P + "a", P + "b"]
        await sqlite.close()

    run(main())


def test_a_locked_data_dir_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        kv = await MemoryKV.open(str(tmp_path))
        try:
            with pytest.raises(StorageOpenError, match="in use by another kube-apiserver"):
                await MemoryKV.open(str(tmp_path))
        finally:
            await kv.close()
        await (await MemoryKV.open(str(tmp_path))).close()  # released at close

    run(main())


def test_a_range_at_a_past_revision_undoes_the_writes_after_it(tmp_path: Path) -> None:
    async def main() -> None:
        kv = await MemoryKV.open(str(tmp_path))
        try:
            a = await kv.create(P + "a", b"a1")
            b = await kv.create(P + "b", b"b1")
            outside = await kv.create("/registry/secrets/ns/s", b"s1")
            at = outside.revision
            await kv.update(P + "a", b"a2", a.revision)
            await kv.delete(P + "b", b.revision)
            again = await kv.create(P + "b", b"b2")
            await kv.create(P + "c", b"c1")
            await kv.update(P + "a", b"a3", 0)

            past = await kv.range(P, END, at)
            assert [(i.key, i.value, i.mod_revision) for i in past.kvs] == [
                (P + "a", b"a1", a.revision), (P + "b", b"b1", b.revision)]
            assert past.revision == at
            assert await kv.count(P, END, at) == 2
            assert await kv.count(P, END) == 3
            now = await kv.range(P, END, 0, limit=2)
            assert [i.value for i in now.kvs] == [b"a3", b"b2"] and now.more
            assert (await kv.range(P + "b", END, again.revision)).kvs[0].value == b"b2"
        finally:
            await kv.close()

    run(main())


def test_a_compaction_drops_the_history_before_it(tmp_path: Path) -> None:
    async def main() -> None:
        kv = await MemoryKV.open(str(tmp_path))
        try:
            first = await kv.create(P + "a", b"a1")
            second = await kv.delete(P + "a", first.revision)
            third = await kv.create(P + "b", b"b1")
            await kv.compact(second.revision)
            with pytest.raises(CompactedError):
                await kv.range(P, END, first.revision)
            with pytest.raises(CompactedError):
                await anext(kv.watch(P, END, second.revision))
            stream = kv.watch(P, END, second.revision + 1)
            batch = await anext(stream)
            assert [(e.type, e.key, e.revision) for e in batch.events] == [(PUT, P + "b", third.revision)]
            await stream.aclose()
            assert [(i.key, i.value) for i in (await kv.range(P, END, second.revision)).kvs] == []
        finally:
            await kv.close()

    run(main())


def test_a_write_manys_writer_goes_on_for_a_turn_before_the_watchers_get_its_batch(tmp_path: Path) -> None:
    """As an HTTP answer does: its task may await once more before the response is written, and the batch's
    watchers (every watch cache and informer) would take the loop first."""

    async def main() -> list[str]:
        kv = await MemoryKV.open(str(tmp_path))
        order: list[str] = []
        try:
            stream = kv.watch(P, END, 0)

            async def watch() -> None:
                batch = await anext(stream)
                order.append(f"watcher:{len(batch.events)}")

            watching = asyncio.ensure_future(watch())
            await asyncio.sleep(0.01)
            await kv.write_many([kvs.Write(kvs.CREATE, f"{P}{i}", b"v") for i in range(10)])
            await asyncio.sleep(0)
            order.append("writer")
            await asyncio.wait_for(watching, 5)
            single = await kv.create(P + "single", b"v")  # published at once: nothing is deferred any more
            later = await asyncio.wait_for(anext(stream), 5)
            assert [e.revision for e in later.events] == [single.revision]
            await stream.aclose()
        finally:
            await kv.close()
        return order

    assert run(main()) == ["writer", "watcher:10"]


def test_a_database_with_history_but_no_keys_starts_compacted_too(tmp_path: Path) -> None:
    """Its history is not read whatever it holds: a watch from before its revision would replay nothing."""

    async def main() -> None:
        sqlite = await SQLiteKV.open(str(tmp_path))
        created = await sqlite.create(P + "a", b"a1")
        deleted = await sqlite.delete(P + "a", created.revision)
        await sqlite.close()
        kv = await MemoryKV.open(str(tmp_path))
        try:
            assert await kv.compacted_revision() == deleted.revision
            with pytest.raises(CompactedError):
                await anext(kv.watch(P, END, created.revision))
        finally:
            await kv.close()

    run(main())


def test_a_fresh_store_is_not_compacted(tmp_path: Path) -> None:
    async def main() -> None:
        kv = await MemoryKV.open(str(tmp_path))
        try:
            assert await kv.compacted_revision() == 0
            stream = kv.watch(P, END, 1)
            assert (await anext(stream)).events == []  # the empty history, then its progress notification
            await stream.aclose()
        finally:
            await kv.close()

    run(main())
