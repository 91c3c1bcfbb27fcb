"""Snapshots of the whole store and their restore (storage/snapshot.py), on both backends: a restore writes the
difference as compare-and-swap writes, so a watch sees it as events and revisions only move forward."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kv_backends import on_each_backend, open_kv  # noqa: F401 - open_kv: the fixture

from kube_apiserver.storage import snapshot
from kube_apiserver.storage.compactor import COMPACT_REV_KEY
from kube_apiserver.storage.kv import DELETE, KV, PUT, UPDATE, KVBatch, TxnResult, Write, prefix_end

run = on_each_backend("snap")


async def values(kv: KV, p: str) -> dict[str, bytes]:
    return {item.key: item.value for item in (await kv.range(p, prefix_end(p))).kvs}


@run
async def test_restore_brings_back_deleted_and_modified_keys_and_removes_created_ones(kv: KV, p: str) -> None:
    kept = await kv.create(p + "kept", b"k")
    changed = await kv.create(p + "changed", b"c1")
    gone = await kv.create(p + "gone", b"g")
    taken = await snapshot.take(kv)
    assert taken.values[p + "kept"] == b"k" and taken.revision >= gone.revision
    await kv.update(p + "changed", b"c2", changed.revision)
    await kv.delete(p + "gone", gone.revision)
    await kv.create(p + "new", b"n")
    before = await kv.current_revision()

    result = await snapshot.restore(kv, taken)

    assert await values(kv, p) == {p + "kept": b"k", p + "changed": b"c1", p + "gone": b"g"}
    assert (result.deleted, result.created, result.updated) == (1, 1, 1)
    assert result.revision >= before + 3  # written anew: revisions only move forward
    unchanged = await kv.get(p + "kept")
    assert unchanged is not None and unchanged.mod_revision == kept.revision  # equal keys are not written
    again = await snapshot.restore(kv, taken)
    assert (again.deleted, again.created, again.updated) == (0, 0, 0)


@run
async def test_a_watch_sees_the_restore_as_events(kv: KV, p: str) -> None:
    await kv.create(p + "a", b"a1")
    gone = await kv.create(p + "b", b"b")
    taken = await snapshot.take(kv)
    a = await kv.get(p + "a")
    assert a is not None
    await kv.update(p + "a", b"a2", a.mod_revision)
    await kv.delete(p + "b", gone.revision)
    await kv.create(p + "c", b"c")
    stream = kv.watch(p, prefix_end(p), await kv.current_revision() + 1)
    result = await snapshot.restore(kv, taken)
    seen: dict[str, tuple[str, bytes, bytes | None]] = {}
    while len(seen) < 3:
        batch: KVBatch = await asyncio.wait_for(stream.__anext__(), 10)
        seen.update((e.key, (e.type, e.value, e.prev_value)) for e in batch.events)
        assert all(e.revision <= result.revision for e in batch.events)
    await stream.aclose()
    assert seen == {p + "a": (PUT, b"a1", b"a2"), p + "b": (PUT, b"b", None), p + "c": (DELETE, b"", b"c")}


@run
async def test_namespaces_come_back_before_their_objects_and_go_after_them(kv: KV, p: str) -> None:
    if not isinstance(kv, embedded_kvs()):
        pytest.skip("etcd takes the writes concurrently: only the embedded backends commit them in order")
    namespace, item = "/registry/namespaces/snap-ns", "/registry/configmaps/snap-ns/cm"
    created_ns = await kv.create(namespace, b"ns")
    created_cm = await kv.create(item, b"cm")
    taken = await snapshot.take(kv)
    await kv.delete(item, created_cm.revision)
    await kv.delete(namespace, created_ns.revision)
    stream = kv.watch("/registry/", prefix_end("/registry/"), await kv.current_revision() + 1)
    await snapshot.restore(kv, taken)
    order = await _keys_seen(stream, 2)
    assert order == [namespace, item]
    await snapshot.restore(kv, _emptied(taken, namespace, item))
    assert await _keys_seen(stream, 2) == [item, namespace]
    await stream.aclose()


def embedded_kvs() -> tuple[type, ...]:
    """The embedded backends: they commit a batch's writes in order, and keep a lease to the fraction of a
    second."""
    from kube_apiserver.storage.memory import MemoryKV
    from kube_apiserver.storage.sqlite import SQLiteKV

    return SQLiteKV, MemoryKV


async def _keys_seen(stream: Any, count: int) -> list[str]:
    keys: list[str] = []
    while len(keys) < count:
        batch = await asyncio.wait_for(stream.__anext__(), 10)
        keys.extend(e.key for e in batch.events)
    return keys


def _emptied(taken: snapshot.Snapshot, *keys: str) -> snapshot.Snapshot:
    return snapshot.Snapshot({k: v for k, v in taken.values.items() if k not in keys}, taken.revision)


@run
async def test_what_the_server_keeps_writing_is_left_out(kv: KV, p: str) -> None:
    lease = "/registry/leases/kube-system/apiserver-snap"
    master = "/registry/masterleases/10.9.9.9"
    await kv.create(lease, b"l1")
    await kv.create(master, b"m1")
    await kv.create(COMPACT_REV_KEY, b"1")
    taken = await snapshot.take(kv)
    assert lease not in taken.values and master not in taken.values and COMPACT_REV_KEY not in taken.values
    renewed = await kv.get(lease)
    assert renewed is not None
    await kv.update(lease, b"l2", renewed.mod_revision)
    await snapshot.restore(kv, snapshot.Snapshot({}, taken.revision))  # even a restore to nothing
    after = await kv.get(lease)
    assert after is not None and after.value == b"l2"
    assert await kv.get(master) is not None and await kv.get(COMPACT_REV_KEY) is not None
    assert not await values(kv, p)


@run
async def test_keys_a_controller_derives_are_kept_as_asked(kv: KV, p: str) -> None:
    rules = await kv.create(p + "derived", b"r1")
    taken = await snapshot.take(kv)
    await kv.update(p + "derived", b"r2", rules.revision)
    await kv.create(p + "default", b"d")
    await kv.create(p + "other", b"o")

    def keep(key: str, current: bytes, snap: snapshot.Snapshot) -> bool:
        assert snap is taken
        return key in (p + "derived", p + "default")

    result = await snapshot.restore(kv, taken, keep=keep)
    assert await values(kv, p) == {p + "derived": b"r2", p + "default": b"d"}
    assert (result.deleted, result.created, result.updated) == (1, 0, 0)


@run
async def test_a_snapshot_larger_than_a_page_is_read_at_one_revision(kv: KV, p: str) -> None:
    for name in "abcde":
        await kv.create(p + name, name.encode())
    pages = snapshot.PAGE_SIZE
    snapshot.PAGE_SIZE = 2
    try:
        taken = await snapshot.take(kv)
    finally:
        snapshot.PAGE_SIZE = pages
    assert {k: v for k, v in taken.values.items() if k.startswith(p)} == {p + n: n.encode() for n in "abcde"}


@run
async def test_written_back_keys_get_the_ttl_asked_for(kv: KV, p: str) -> None:
    if not isinstance(kv, embedded_kvs()):
        pytest.skip("etcd's leases last whole seconds")
    event = p + "event"
    created = await kv.create(event, b"e1")
    taken = await snapshot.take(kv)
    await kv.delete(event, created.revision)
    await snapshot.restore(kv, taken, lambda key: 0.2 if key == event else 0.0)
    assert await kv.get(event) is not None
    deadline = asyncio.get_running_loop().time() + 5
    while await kv.get(event) is not None:
        assert asyncio.get_running_loop().time() < deadline, "the restored key never expired"
        await asyncio.sleep(0.05)


class RacingKV:
    """A KV whose first `races` updates lose to a write that lands just before them."""

    def __init__(self, kv: KV, races: int):
        self.kv = kv
        self.races = races

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kv, name)

    async def write_many(self, writes: list[Write]) -> list[TxnResult]:
        for write in writes:
            if write.kind == UPDATE and self.races > 0:
                self.races -= 1
                await self.kv.update(write.key, b"racer", write.expected_mod_revision)
        return await snapshot._write(self.kv, writes)


@run
async def test_a_write_that_loses_a_race_is_planned_again(kv: KV, p: str) -> None:
    created = await kv.create(p + "k", b"v1")
    taken = await snapshot.take(kv)
    await kv.update(p + "k", b"v2", created.revision)
    result = await snapshot.restore(RacingKV(kv, 2), taken)  # type: ignore[arg-type]
    assert (await values(kv, p)) == {p + "k": b"v1"}
    assert result.updated == 1
    raced = await kv.get(p + "k")
    assert raced is not None
    await kv.update(p + "k", b"v3", raced.mod_revision)
    with pytest.raises(snapshot.RestoreConflictError):
        await snapshot.restore(RacingKV(kv, snapshot.MAX_ROUNDS), taken)  # type: ignore[arg-type]


def test_sqlite_commits_a_batch_writing_one_key_several_times_in_order(tmp_path: Any) -> None:
    """write_many's writes share one transaction; each is compared with what the ones before it left, and the
    key's final row, history and lease are those of the last one (the commit writes rows in bulk)."""
    from kube_apiserver.storage.kv import CREATE, DELETE_KEY
    from kube_apiserver.storage.sqlite import SQLiteKV

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            key = "/registry/batch/k"
            stream = kv.watch(key, prefix_end(key), await kv.current_revision() + 1)
            results = await kv.write_many(
                [
                    Write(CREATE, key, b"v1", 0, 60.0),
                    Write(UPDATE, key, b"v2"),
                    Write(DELETE_KEY, key),
                    Write(CREATE, key, b"v3"),
                    Write(CREATE, key, b"v4"),
                    Write(UPDATE, key, b"v5", 1),  # not the key's mod revision
                ]
            )
            assert [r.succeeded for r in results] == [True, True, True, True, False, False]
            first, second, _, fourth = (r.revision for r in results[:4])
            assert second == first + 1 and fourth == first + 3
            assert results[4].current is not None and results[4].current.value == b"v3"
            now = await kv.get(key)
            assert now is not None and (now.value, now.create_revision, now.mod_revision) == (
                b"v3",
                fourth,
                fourth,
            )
            assert [x.value for x in (await kv.range(key, prefix_end(key), second)).kvs] == [b"v2"]
            events = (await asyncio.wait_for(stream.__anext__(), 10)).events
            assert [(e.type, e.value, e.prev_value) for e in events] == [
                (PUT, b"v1", None),
                (PUT, b"v2", b"v1"),
                (DELETE, b"", b"v2"),
                (PUT, b"v3", None),
            ]
            await stream.aclose()
            leases = kv._loop_conn.execute("SELECT COUNT(*) FROM leases WHERE key = ?", (key,)).fetchone()[0]
            assert leases == 0  # the last write dropped the first one's lease
        finally:
            await kv.close()

    asyncio.run(main())


def test_sqlite_reads_a_large_batch_s_keys_in_chunks(tmp_path: Any) -> None:
    from kube_apiserver.storage.kv import CREATE, DELETE_KEY
    from kube_apiserver.storage.sqlite import SQLiteKV

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            keys = [f"/registry/many/{i:04d}" for i in range(700)]  # more than one query's worth of keys
            created = await kv.write_many([Write(CREATE, key, b"v") for key in keys])
            assert all(r.succeeded for r in created)
            again = await kv.write_many([Write(CREATE, key, b"w") for key in keys])
            assert not any(r.succeeded for r in again) and all(r.current is not None for r in again)
            deletes = [Write(DELETE_KEY, key, b"", r.revision) for key, r in zip(keys, created, strict=True)]
            assert all(r.succeeded for r in await kv.write_many(deletes))
            assert await kv.count("/registry/many/", prefix_end("/registry/many/")) == 0
        finally:
            await kv.close()

    asyncio.run(main())
