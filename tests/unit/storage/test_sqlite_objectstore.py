"""The SQLite KV and ObjectStore: etcd semantics (revisions, CAS, history, watch, compaction)."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.storage.interface import (
    ConflictError,
    ExpiredError,
    KeyExistsError,
    KeyNotFoundError,
    ListOptions,
    Preconditions,
    TooLargeResourceVersionError,
)
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV


def cm(name: str, data: str = "x") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"},
            "data": {"k": data}}


def run(coro_fn):
    def wrapper(tmp_path):
        async def main():
            kv = await SQLiteKV.open(str(tmp_path))
            try:
                await coro_fn(ObjectStore(kv), kv)
            finally:
                await kv.close()
        asyncio.run(main())
    wrapper.__name__ = coro_fn.__name__
    return wrapper


@run
async def test_create_get_and_revisions(store, kv):
    a = await store.create("/registry/configmaps/ns/a", cm("a"))
    b = await store.create("/registry/configmaps/ns/b", cm("b"))
    assert int(b["metadata"]["resourceVersion"]) == int(a["metadata"]["resourceVersion"]) + 1
    got = await store.get("/registry/configmaps/ns/a")
    assert got == a
    with pytest.raises(KeyExistsError):
        await store.create("/registry/configmaps/ns/a", cm("a"))
    with pytest.raises(KeyNotFoundError):
        await store.get("/registry/configmaps/ns/zz")


@run
async def test_guaranteed_update_noop_keeps_revision_and_preconditions(store, kv):
    a = await store.create("/r/a", cm("a"))

    async def same(cur):
        return cur

    assert await store.guaranteed_update("/r/a", same) == a

    async def change(cur):
        cur["data"]["k"] = "y"
        return cur

    b = await store.guaranteed_update("/r/a", change)
    assert int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
    with pytest.raises(ConflictError):
        await store.guaranteed_update("/r/a", change, Preconditions(resource_version=a["metadata"]["resourceVersion"]))


@run
async def test_concurrent_updates_all_apply(store, kv):
    await store.create("/r/counter", {"metadata": {"name": "counter"}, "n": 0})

    async def incr(cur):
        await asyncio.sleep(0)
        cur["n"] += 1
        return cur

    await asyncio.gather(*(store.guaranteed_update("/r/counter", incr) for _ in range(50)))
    assert (await store.get("/r/counter"))["n"] == 50


@run
async def test_list_pages_are_one_snapshot(store, kv):
    for i in range(10):
        await store.create(f"/r/x/{i:02d}", cm(f"{i:02d}"))
    first = await store.get_list("/r/x/", ListOptions(limit=4))
    assert [o["metadata"]["name"] for o in first.items] == ["00", "01", "02", "03"]
    assert first.remaining_item_count == 6
    await store.delete("/r/x/05")
    await store.create("/r/x/99", cm("99"))
    names, counts = [], []
    token = first.continue_token
    while token:
        page = await store.get_list("/r/x/", ListOptions(limit=4, continue_token=token))
        assert page.resource_version == first.resource_version
        names += [o["metadata"]["name"] for o in page.items]
        counts.append(page.remaining_item_count)
        token = page.continue_token
    assert names == ["04", "05", "06", "07", "08", "09"]
    assert counts == [2, None]  # what is left at the pages' revision (etcd counts in the same answer), not now


@run
async def test_list_with_predicate_fills_limit(store, kv):
    for i in range(20):
        await store.create(f"/r/x/{i:02d}", cm(f"{i:02d}", "even" if i % 2 == 0 else "odd"))
    res = await store.get_list("/r/x/", ListOptions(limit=3, predicate=lambda o: o["data"]["k"] == "odd",
                                                      predicate_empty=False))
    assert [o["metadata"]["name"] for o in res.items] == ["01", "03", "05"]
    assert res.continue_token and res.remaining_item_count is None


@run
async def test_list_with_predicate_never_exceeds_limit(store, kv):
    """A page read after filtering left the first short stops at the limit; the next page resumes there."""
    await store.create("/r/x/00", cm("00", "skip"))
    for i in range(1, 10):
        await store.create(f"/r/x/{i:02d}", cm(f"{i:02d}", "keep"))
    keep = lambda o: o["data"]["k"] == "keep"  # noqa: E731
    first = await store.get_list("/r/x/", ListOptions(limit=2, predicate=keep, predicate_empty=False))
    assert [o["metadata"]["name"] for o in first.items] == ["01", "02"]
    second = await store.get_list("/r/x/", ListOptions(limit=2, predicate=keep, predicate_empty=False,
                                                       continue_token=first.continue_token))
    assert [o["metadata"]["name"] for o in second.items] == ["03", "04"]


@run
async def test_too_large_resource_version(store, kv):
    await store.create("/r/a", cm("a"))
    with pytest.raises(TooLargeResourceVersionError):
        await store.get_list("/r/", ListOptions(resource_version="999", resource_version_match="Exact"))


@run
async def test_watch_from_revision_replays_history_then_live(store, kv):
    a = await store.create("/r/w/a", cm("a"))
    rv = a["metadata"]["resourceVersion"]

    async def change(cur):
        cur["data"]["k"] = "changed"
        return cur

    await store.guaranteed_update("/r/w/a", change)
    watcher = await store.watch("/r/w/", rv)
    await store.delete("/r/w/a")
    await store.create("/r/w/b", cm("b"))
    events = [await anext(watcher) for _ in range(3)]
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        ("MODIFIED", "a"), ("DELETED", "a"), ("ADDED", "b")]
    revs = [e.revision for e in events]
    assert revs == sorted(revs) and len(set(revs)) == 3
    await watcher.stop()


@run
async def test_watch_zero_sends_current_state_and_selector_transitions(store, kv):
    await store.create("/r/w/a", cm("a", "blue"))
    watcher = await store.watch("/r/w/", "0", predicate=lambda o: o["data"]["k"] == "blue")

    async def to_red(cur):
        cur["data"]["k"] = "red"
        return cur

    await store.guaranteed_update("/r/w/a", to_red)
    got = [await anext(watcher) for _ in range(2)]
    assert [e.type for e in got] == ["ADDED", "DELETED"]
    await watcher.stop()


@run
async def test_watch_list_streams_a_large_state_then_its_end_bookmark_and_live_events(store, kv):
    await asyncio.gather(*(store.create(f"/r/big/{i:05d}", cm(f"{i:05d}")) for i in range(5000)))
    listed_at = await store.current_revision()
    watcher = await store.watch("/r/big/", "", send_initial_events=True, allow_bookmarks=True)
    assert not watcher._pending  # decoded as taken, never queued as events
    await store.create("/r/big/live", cm("live"))
    events = [await asyncio.wait_for(anext(watcher), 5) for _ in range(5002)]
    assert [e.object["metadata"]["name"] for e in events[:5000]] == [f"{i:05d}" for i in range(5000)]
    end, live = events[5000], events[5001]
    assert end.type == "BOOKMARK" and end.object["metadata"] == {
        "resourceVersion": str(listed_at), "annotations": {"k8s.io/initial-events-end": "true"}}
    assert (live.type, live.object["metadata"]["name"]) == ("ADDED", "live")
    await watcher.stop()
    stopped = await store.watch("/r/big/", "0")
    await anext(stopped)
    await stopped.stop()
    assert [e async for e in stopped] == []  # stopped in the middle of its initial state: it ends


@run
async def test_compaction_expires_old_revisions(store, kv):
    a = await store.create("/r/a", cm("a"))
    for i in range(5):
        await store.create(f"/r/b{i}", cm("b"))
    await kv.compact(await kv.current_revision())
    with pytest.raises(ExpiredError):
        await store.watch("/r/", a["metadata"]["resourceVersion"])
    with pytest.raises(ExpiredError):
        await store.get_list("/r/", ListOptions(resource_version=a["metadata"]["resourceVersion"],
                                                 resource_version_match="Exact"))
    assert len((await store.get_list("/r/", ListOptions())).items) == 6


def test_data_survives_reopen(tmp_path):
    async def write():
        kv = await SQLiteKV.open(str(tmp_path))
        store = ObjectStore(kv)
        await asyncio.gather(*(store.create(f"/r/{i}", cm(str(i))) for i in range(100)))
        rev = await kv.current_revision()
        await kv.close()
        return rev

    async def read():
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            res = await ObjectStore(kv).get_list("/r/", ListOptions())
            return len(res.items), await kv.current_revision()
        finally:
            await kv.close()

    rev = asyncio.run(write())
    assert asyncio.run(read()) == (100, rev)


@run
async def test_compactor_compacts_to_the_previous_interval(store, kv):
    from kube_apiserver.storage.compactor import Compactor

    first = await store.create("/r/c/a", cm("a"))
    first_rv = int(first["metadata"]["resourceVersion"])
    compactor = Compactor(kv, 0.02)
    compactor.start()
    for _ in range(500):  # the first tick remembers the revision, a later one compacts to it
        if await kv.compacted_revision() >= first_rv:
            break
        await asyncio.sleep(0.01)
    await compactor.stop()
    assert await kv.compacted_revision() >= first_rv
    with pytest.raises(ExpiredError):
        await store.watch("/r/c/", str(first_rv - 1))
    assert [o["metadata"]["name"] for o in (await store.get_list("/r/c/", ListOptions())).items] == ["a"]


@run
async def test_leases_expire_keys_and_every_write_renews_them(store, kv):
    await store.create("/r/ttl/a", cm("a"), ttl=0.2)
    await store.create("/r/ttl/b", cm("b"), ttl=0.2)
    await store.create("/r/ttl/c", cm("c"))
    watcher = await store.watch("/r/ttl/", str(await kv.current_revision()))

    async def touch(cur):
        cur["data"]["k"] = "touched"
        return cur

    await asyncio.sleep(0.1)
    await store.guaranteed_update("/r/ttl/b", touch, ttl=lambda obj: 5)  # renewed
    await asyncio.sleep(0.15)
    assert await kv.expire_leases() == 1
    names = [o["metadata"]["name"] for o in (await store.get_list("/r/ttl/", ListOptions())).items]
    assert names == ["b", "c"]
    events = [await anext(watcher) for _ in range(2)]
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [("MODIFIED", "b"), ("DELETED", "a")]
    await store.guaranteed_update("/r/ttl/b", lambda cur: _set(cur, "again"), ttl=None)
    assert await kv.expire_leases() == 0  # a write without a lease dropped it
    await watcher.stop()


async def _set(cur, value):
    cur["data"]["k"] = value
    return cur


def _set_data(value: str):
    async def change(obj: dict) -> dict:
        return {**obj, "data": {"k": value}}

    return change


async def _write_history(store: ObjectStore) -> int:
    """Creates, updates and deletes over ~100 revisions; returns a revision in the middle of them."""
    middle = 0
    for round_ in range(10):
        for i in range(4):
            name = f"/r/h{i}"
            if round_ == 0:
                await store.create(name, cm(str(i)))
            else:
                await store.guaranteed_update(name, _set_data(str(round_)))
        if round_ == 5:
            await store.delete("/r/h3")
            await store.create("/r/h3", cm("again"))
            middle = int((await store.get("/r/h0"))["metadata"]["resourceVersion"])
    return middle


def test_compaction_in_batches_deletes_what_one_compaction_deletes(tmp_path, monkeypatch):
    from kube_apiserver.storage.sqlite import kv as sqlite_kv

    def history_after_compaction(directory: str, batch: int) -> list[tuple]:
        async def main() -> list[tuple]:
            monkeypatch.setattr(sqlite_kv, "COMPACT_BATCH_REVISIONS", batch)
            kv = await SQLiteKV.open(directory)
            try:
                middle = await _write_history(ObjectStore(kv))
                await kv.compact(middle)
                assert await kv.compacted_revision() == middle
                return kv._read_conn.execute("SELECT rev, key, deleted FROM log ORDER BY rev").fetchall()
            finally:
                await kv.close()

        return asyncio.run(main())

    whole = history_after_compaction(str(tmp_path / "whole"), 1_000_000)
    assert history_after_compaction(str(tmp_path / "batched"), 7) == whole
    assert len(whole) < 40  # most of the history before the middle is gone


@run
async def test_a_write_during_compaction_commits_between_its_batches(store, kv):
    """Compaction deletes history in batches, each a transaction of the writer thread: a write that comes while
    one batch runs is committed before the next, not after the whole compaction."""
    import threading

    from kube_apiserver.storage.sqlite import kv as sqlite_kv

    await _write_history(store)
    loop = asyncio.get_running_loop()
    first_batch, write_queued = asyncio.Event(), threading.Event()
    plain = sqlite_kv.SQLiteKV._compact
    order: list[str] = []

    def compact_step(self: SQLiteKV, *args: object) -> None:
        loop.call_soon_threadsafe(first_batch.set)
        write_queued.wait(10)  # the write has been handed to the writer thread meanwhile
        plain(self, *args)

    sqlite_kv.SQLiteKV._compact = compact_step
    sqlite_kv.COMPACT_BATCH_REVISIONS, batch = 7, sqlite_kv.COMPACT_BATCH_REVISIONS
    try:
        async def compaction() -> None:
            await kv.compact(await kv.current_revision())
            order.append("compacted")

        async def write() -> None:
            await store.create("/r/during", cm("during"))
            order.append("written")

        compacting = asyncio.ensure_future(compaction())
        await first_batch.wait()
        writing = asyncio.ensure_future(write())
        for _ in range(20):  # the write loop takes the write and hands its batch to the writer thread
            await asyncio.sleep(0)
        write_queued.set()
        await asyncio.gather(compacting, writing)
    finally:
        sqlite_kv.SQLiteKV._compact = plain
        sqlite_kv.COMPACT_BATCH_REVISIONS = batch
    assert order == ["written", "compacted"]

