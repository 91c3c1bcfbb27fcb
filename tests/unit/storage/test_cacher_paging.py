"""Paged and exact lists served from the watch cache's snapshots (kube-apiserver's ListFromCacheSnapshot):
pages of one list show one revision whatever is written between them, without reading the storage while
the cache holds that revision; a revision it no longer holds is the storage's to answer (410 if compacted)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from cachertesting import with_cacher
from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.cacher.watch_cache import WatchCache
from kube_apiserver.storage.objectstore import INCONSISTENT_CONTINUE, ObjectStore

PREFIX = "/registry/configmaps/"


def cm(name: str, ns: str = "ns", **data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": data,
    }


async def create(store: ObjectStore, name: str, ns: str = "ns", **data: str) -> dict:
    return await store.create(f"{PREFIX}{ns}/{name}", cm(name, ns, **data))


async def update(store: ObjectStore, name: str, **data: str) -> dict:
    async def change(obj: dict) -> dict:
        return {**obj, "data": data}

    return await store.guaranteed_update(f"{PREFIX}ns/{name}", change)


def names(result: storage.ListResult) -> list[str]:
    return [o["metadata"]["name"] for o in result.items]


def count_store_lists(store: ObjectStore) -> list[storage.ListOptions]:
    """The lists the storage serves from now on."""
    calls: list[storage.ListOptions] = []
    get_list = store.get_list

    async def counted(key_prefix: str, opts: storage.ListOptions) -> storage.ListResult:
        calls.append(opts)
        return await get_list(key_prefix, opts)

    store.get_list = counted  # type: ignore[method-assign]
    return calls


async def next_page(
    cacher: Cacher, previous: storage.ListResult, limit: int, **options: Any
) -> storage.ListResult:
    return await cacher.get_list(
        PREFIX, storage.ListOptions(limit=limit, continue_token=previous.continue_token, **options)
    )


run = with_cacher(PREFIX)


@run
async def test_pages_show_the_first_pages_revision_across_writes_without_the_storage(store, cacher):
    for i in range(9):
        await create(store, f"cm-{i}", v="old")
    await cacher.get_list(PREFIX, storage.ListOptions(resource_version="0"))  # ready
    listed = count_store_lists(store)
    first = await cacher.get_list(PREFIX, storage.ListOptions(limit=3))
    assert names(first) == ["cm-0", "cm-1", "cm-2"] and first.remaining_item_count == 6
    revision = first.resource_version
    token = json.loads(base64.urlsafe_b64decode(first.continue_token + "=="))
    assert token == {"v": "meta.k8s.io/v1", "rv": revision, "start": "ns/cm-2\u0000"}  # upstream's format
    # Between the pages: one on the next page goes, one is changed, one is added, one before is changed.
    await store.delete(f"{PREFIX}ns/cm-4")
    await update(store, "cm-5", v="new")
    await create(store, "cm-3a", v="new")
    await update(store, "cm-0", v="new")
    second = await next_page(cacher, first, 3)
    assert names(second) == ["cm-3", "cm-4", "cm-5"] and second.remaining_item_count == 3
    assert [o["data"]["v"] for o in second.items] == ["old"] * 3
    assert second.resource_version == revision
    await store.delete(f"{PREFIX}ns/cm-8")
    third = await next_page(cacher, second, 3)
    assert names(third) == ["cm-6", "cm-7", "cm-8"] and not third.continue_token
    assert third.remaining_item_count is None and third.resource_version == revision
    assert listed == []  # every page came from the cache
    latest = await cacher.get_list(PREFIX, storage.ListOptions(limit=20))
    assert names(latest) == ["cm-0", "cm-1", "cm-2", "cm-3", "cm-3a", "cm-5", "cm-6", "cm-7"]


@run
async def test_an_exact_list_is_the_state_at_its_revision(store, cacher):
    await create(store, "a", v="1")
    at = (await create(store, "b", v="1"))["metadata"]["resourceVersion"]
    await update(store, "b", v="2")
    await store.delete(f"{PREFIX}ns/a")
    await create(store, "c", v="1")
    await cacher.get_list(PREFIX, storage.ListOptions())  # fresh
    listed = count_store_lists(store)
    for opts in (
        storage.ListOptions(resource_version=at, resource_version_match="Exact"),
        storage.ListOptions(resource_version=at, limit=10),
    ):  # the legacy exact match
        result = await cacher.get_list(PREFIX, opts)
        assert [(o["metadata"]["name"], o["data"]["v"]) for o in result.items] == [("a", "1"), ("b", "1")]
        assert result.resource_version == int(at)
    assert listed == []
    now = await cacher.get_list(
        PREFIX, storage.ListOptions(resource_version=at, resource_version_match="NotOlderThan")
    )
    assert [(o["metadata"]["name"], o["data"]["v"]) for o in now.items] == [("b", "2"), ("c", "1")]


@run
async def test_a_compacted_pages_token_is_410_with_a_token_of_the_latest_state(store, cacher):
    for i in range(4):
        await create(store, f"cm-{i}")
    await cacher.get_list(PREFIX, storage.ListOptions(resource_version="0"))  # ready
    first = await cacher.get_list(PREFIX, storage.ListOptions(limit=2))
    await create(store, "late")
    await store.kv.compact(await store.current_revision())
    listed = count_store_lists(store)
    with pytest.raises(storage.ExpiredError) as expired:
        await next_page(cacher, first, 2)
    assert str(expired.value) == INCONSISTENT_CONTINUE and len(listed) == 1  # the storage's answer
    token = json.loads(base64.urlsafe_b64decode(expired.value.continue_token + "=="))
    assert token == {"v": "meta.k8s.io/v1", "rv": -1, "start": "ns/cm-1\u0000"}
    rest = await cacher.get_list(
        PREFIX, storage.ListOptions(limit=2, continue_token=expired.value.continue_token)
    )
    assert names(rest) == ["cm-2", "cm-3"] and rest.continue_token  # the latest state, from the cache
    assert rest.resource_version == await store.current_revision() and len(listed) == 1


def test_a_token_older_than_the_event_ring_is_read_from_the_storages_history(tmp_path):
    async def main() -> None:
        from kube_apiserver.storage.sqlite import SQLiteKV

        kv = await SQLiteKV.open(str(tmp_path))
        store = ObjectStore(kv)
        cacher = Cacher(store, PREFIX)
        cacher.cache = WatchCache(capacity=4)
        cacher.start()
        try:
            for i in range(6):
                await create(store, f"cm-{i}")
            await cacher.get_list(PREFIX, storage.ListOptions())  # ready and fresh
            first = await cacher.get_list(PREFIX, storage.ListOptions(limit=2))
            cacher.cache.kept.clear()  # as if it had expired: the ring is all that could rebuild it
            for i in range(6):
                await update(store, f"cm-{i}", v="later")
            await cacher.get_list(PREFIX, storage.ListOptions())  # the cache holds those writes
            listed = count_store_lists(store)
            second = await next_page(cacher, first, 2)
            assert names(second) == ["cm-2", "cm-3"] and [o["data"] for o in second.items] == [{}, {}]
            assert len(listed) == 1 and second.resource_version == first.resource_version
        finally:
            await cacher.stop()
            await kv.close()

    asyncio.run(main())


@run
async def test_selected_pages_fill_their_limit_and_give_no_count(store, cacher):
    for i in range(10):
        await create(store, f"cm-{i}", parity="even" if i % 2 == 0 else "odd")
    listed = count_store_lists(store)
    even = storage.ListOptions(
        limit=2, predicate=lambda o: o["data"]["parity"] == "even", predicate_empty=False
    )
    pages = [await cacher.get_list(PREFIX, even)]
    while pages[-1].continue_token:
        await create(store, f"cm-{len(pages)}b", parity="even")  # after the first page's revision: never seen
        pages.append(
            await cacher.get_list(
                PREFIX,
                storage.ListOptions(
                    limit=2,
                    continue_token=pages[-1].continue_token,
                    predicate=even.predicate,
                    predicate_empty=False,
                ),
            )
        )
    assert [names(p) for p in pages] == [["cm-0", "cm-2"], ["cm-4", "cm-6"], ["cm-8"]]
    assert all(p.remaining_item_count is None for p in pages) and listed == []


@run
async def test_a_list_at_resource_version_0_is_whole_and_a_not_older_than_one_is_paged(store, cacher):
    for i in range(5):
        await create(store, f"cm-{i}")
    listed = count_store_lists(store)
    whole = await cacher.get_list(PREFIX, storage.ListOptions(resource_version="0", limit=2))
    assert len(whole.items) == 5 and not whole.continue_token  # computeListLimit ignores it at "0"
    unlimited = await cacher.get_list(PREFIX, storage.ListOptions(limit=-1))
    assert len(unlimited.items) == 5 and not unlimited.continue_token  # and one below 1
    paged = await cacher.get_list(
        PREFIX, storage.ListOptions(resource_version="1", limit=2, resource_version_match="NotOlderThan")
    )
    assert names(paged) == ["cm-0", "cm-1"] and paged.remaining_item_count == 3
    rest = await next_page(cacher, paged, 4)
    assert names(rest) == ["cm-2", "cm-3", "cm-4"] and rest.resource_version == paged.resource_version
    assert listed == []


def test_without_trusted_progress_consistent_and_ahead_pages_are_the_storages(tmp_path):
    """etcd before 3.4.31: the cache cannot learn it is fresh, so a consistent paged list and a page at a
    revision it has not reached are the storage's (ShouldDelegateConsistentRead, shouldDelegateExactRV);
    one at a revision it holds is still its own."""
    from kube_apiserver.storage.sqlite import SQLiteKV

    class UntrustedProgressKV(SQLiteKV):
        progress_requests_supported = False

    async def main() -> None:
        kv = await UntrustedProgressKV.open(str(tmp_path))
        store = ObjectStore(kv)
        cacher = Cacher(store, PREFIX)
        cacher.start()
        try:
            for i in range(4):
                await create(store, f"cm-{i}")
            await cacher.get_list(PREFIX, storage.ListOptions(resource_version="0"))  # ready
            listed = count_store_lists(store)
            first = await cacher.get_list(PREFIX, storage.ListOptions(limit=2))
            assert names(first) == ["cm-0", "cm-1"] and len(listed) == 1
            while cacher.cache.resource_version < first.resource_version:
                await asyncio.sleep(0.01)
            second = await next_page(cacher, first, 2)
            assert names(second) == ["cm-2", "cm-3"] and len(listed) == 1  # the cache holds that revision
            ahead = storage.ListOptions(resource_version=str(await store.current_revision() + 5), limit=2)
            with pytest.raises(storage.TooLargeResourceVersionError):
                await cacher.get_list(PREFIX, ahead)
            assert len(listed) == 2
        finally:
            await cacher.stop()
            await kv.close()

    asyncio.run(main())
