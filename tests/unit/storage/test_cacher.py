"""The watch cache: fan-out, ordering, slow watchers, freshness, resume and expiry."""

from __future__ import annotations

import asyncio

import pytest

from cachertesting import with_cacher
from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.cacher import cacher as cacher_module

PREFIX = "/registry/configmaps/"


def cm(name: str, ns: str = "ns", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels}}


run = with_cacher(PREFIX)


async def create(store, name: str, ns: str = "ns", **labels: str) -> dict:
    return await store.create(f"{PREFIX}{ns}/{name}", cm(name, ns, **labels))


@run
async def test_500_watchers_each_get_2000_events_in_order_once(store, cacher):
    start = str(await store.current_revision())
    watchers = [await cacher.watch(PREFIX, start) for _ in range(500)]

    async def consume(w) -> list[int]:
        seen = []
        async for event in w:
            seen.append(event.revision)
            if len(seen) == 2000:
                break
        return seen

    consumers = [asyncio.ensure_future(consume(w)) for w in watchers]
    for i in range(2000):
        await create(store, f"cm-{i}")
    results = await asyncio.wait_for(asyncio.gather(*consumers), 120)
    expected = results[0]
    assert len(expected) == 2000 and expected == sorted(set(expected))
    assert all(r == expected for r in results)
    for w in watchers:
        await w.stop()


@run
async def test_slow_watcher_is_closed_without_slowing_others(store, cacher, monkeypatch=None):
    start = str(await store.current_revision())
    slow = await cacher.watch(PREFIX, start)
    slow._capacity = 10
    fast = await cacher.watch(PREFIX, start)
    got = []

    async def drain():
        async for event in fast:
            got.append(event.revision)
            if len(got) == 50:
                return

    consumer = asyncio.ensure_future(drain())
    for i in range(50):
        await create(store, f"cm-{i}")
    await asyncio.wait_for(consumer, 10)
    assert len(got) == 50
    delivered = [e async for e in slow]  # what was buffered, then the end of the stream
    assert len(delivered) == 10 and slow not in cacher.watchers


@run
async def test_selector_transitions_and_namespace_scope(store, cacher):
    watcher = await cacher.watch(f"{PREFIX}ns/", str(await store.current_revision()),
                                 predicate=lambda o: o["metadata"].get("labels", {}).get("app") == "web")
    await create(store, "a", app="web")
    await create(store, "other-ns", ns="elsewhere", app="web")

    async def relabel(app):
        async def update(cur):
            cur["metadata"]["labels"] = {"app": app}
            return cur
        return update

    await store.guaranteed_update(f"{PREFIX}ns/a", await relabel("db"))
    await store.guaranteed_update(f"{PREFIX}ns/a", await relabel("web"))
    await store.delete(f"{PREFIX}ns/a")
    events = [await asyncio.wait_for(anext(watcher), 5) for _ in range(4)]
    assert [e.type for e in events] == ["ADDED", "DELETED", "ADDED", "DELETED"]
    assert all(e.object["metadata"]["name"] == "a" for e in events)
    assert events[1].object["metadata"]["resourceVersion"] == str(events[1].revision)
    await watcher.stop()


@run
async def test_initial_events_then_bookmark_marks_their_end(store, cacher):
    for name in ("b", "a"):
        await create(store, name)
    watcher = await cacher.watch(PREFIX, "", send_initial_events=True, allow_bookmarks=True)
    first = [await anext(watcher) for _ in range(3)]
    assert [(e.type, e.object["metadata"].get("name")) for e in first] == [
        ("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None)]
    assert first[2].object["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert first[2].revision == await store.current_revision()
    await watcher.stop()


@run
async def test_consistent_list_sees_the_latest_write(store, cacher):
    for i in range(20):
        await create(store, f"cm-{i}")
        listed = await cacher.get_list(PREFIX, storage.ListOptions())
        assert len(listed.items) == i + 1  # a list with no resourceVersion is never stale


@run
async def test_resume_expiry_and_too_large(store, cacher):
    first = await create(store, "a")
    await create(store, "b")
    watcher = await cacher.watch(PREFIX, first["metadata"]["resourceVersion"])
    assert (await anext(watcher)).object["metadata"]["name"] == "b"
    await watcher.stop()
    await create(store, "c")
    late = Cacher(store, PREFIX)  # its first list is after "a" was created
    late.start()
    try:
        await late.get_list(PREFIX, storage.ListOptions())
        with pytest.raises(storage.ExpiredError) as expired:
            await late.watch(PREFIX, first["metadata"]["resourceVersion"])
        assert str(expired.value).startswith("too old resource version: ")
    finally:
        await late.stop()
    cacher_module.FRESHNESS_TIMEOUT = 0.2
    try:
        with pytest.raises(storage.TooLargeResourceVersionError):
            await cacher.watch(PREFIX, "999999")
    finally:
        cacher_module.FRESHNESS_TIMEOUT = 3.0


@run
async def test_bookmark_requested_after_buffered_events(store, cacher):
    watcher = await cacher.watch(PREFIX, str(await store.current_revision()))
    created = await create(store, "a")
    await asyncio.sleep(0.05)
    watcher.request_bookmark()
    events = [await anext(watcher) for _ in range(2)]
    assert [e.type for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1].revision >= int(created["metadata"]["resourceVersion"])
    await watcher.stop()


async def create_many(store, count: int, ns: str = "ns") -> None:
    await asyncio.gather(*(create(store, f"cm-{i:05d}", ns) for i in range(count)))


async def take(watcher, count: int) -> list:
    return [await asyncio.wait_for(anext(watcher), 5) for _ in range(count)]


@run
async def test_initial_state_larger_than_the_buffer_is_streamed_whole(store, cacher):
    await create_many(store, 5000)  # more than the 4096 live events a watcher may fall behind by
    await cacher.get_list(PREFIX, storage.ListOptions())  # the cache has them all
    plain = await cacher.watch(PREFIX, "0")
    watch_list = await cacher.watch(PREFIX, "", send_initial_events=True, allow_bookmarks=True)
    assert not plain._buffer and not watch_list._buffer  # streamed from the snapshot, not queued
    for watcher in (plain, watch_list):
        events = await take(watcher, 5000)
        assert {e.type for e in events} == {"ADDED"}
        assert [e.object["metadata"]["name"] for e in events] == [f"cm-{i:05d}" for i in range(5000)]
    end = await take(watch_list, 1)
    assert end[0].type == "BOOKMARK"
    assert end[0].object["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    await create(store, "live")
    live = await take(plain, 1) + await take(watch_list, 1)
    assert [(e.type, e.object["metadata"]["name"]) for e in live] == [("ADDED", "live")] * 2
    for watcher in (plain, watch_list):
        await watcher.stop()


@run
async def test_replayed_events_do_not_count_against_the_buffer(store, cacher):
    start = str(await store.current_revision())
    await create_many(store, 5000)
    await cacher.get_list(PREFIX, storage.ListOptions())
    watcher = await cacher.watch(PREFIX, start)  # 5000 cached events after `start`, more than the buffer
    events = await take(watcher, 5000)
    assert len({e.object["metadata"]["name"] for e in events}) == 5000
    assert [e.revision for e in events] == sorted(e.revision for e in events)
    await watcher.stop()


@run
async def test_live_events_during_the_initial_state_follow_it_and_are_bounded(store, cacher):
    cacher.watcher_buffer = 10
    await create_many(store, 50)
    await cacher.get_list(PREFIX, storage.ListOptions())
    patient = await cacher.watch(PREFIX, "", send_initial_events=True, allow_bookmarks=True)
    slow = await cacher.watch(PREFIX, "", send_initial_events=True, allow_bookmarks=True)
    for i in range(5):
        await create(store, f"live-{i}")
    await asyncio.sleep(0.05)
    events = await take(patient, 50 + 1 + 5)
    assert [e.type for e in events[49:52]] == ["ADDED", "BOOKMARK", "ADDED"]
    assert [e.object["metadata"]["name"] for e in events[51:]] == [f"live-{i}" for i in range(5)]
    for i in range(5, 11):  # 11 live events for the slow one, which has not read anything yet
        await create(store, f"live-{i}")
    await asyncio.sleep(0.05)
    assert slow not in cacher.watchers  # fell behind on live events: closed, as before
    assert [e async for e in slow] == []  # a partial initial state is never followed by live events
    assert patient in cacher.watchers
    await patient.stop()


@run
async def test_a_slow_live_watcher_after_its_initial_state_is_closed(store, cacher):
    cacher.watcher_buffer = 10
    await create_many(store, 30)
    await cacher.get_list(PREFIX, storage.ListOptions())
    watcher = await cacher.watch(PREFIX, "0")
    await take(watcher, 30)
    for i in range(11):
        await create(store, f"live-{i}")
    await asyncio.sleep(0.05)
    assert watcher not in cacher.watchers
    assert len([e async for e in watcher]) == 10  # what was buffered, then the end of the stream


@run
async def test_initial_state_is_scoped_by_namespace_and_selector(store, cacher):
    await create_many(store, 20, ns="a")
    await create_many(store, 20, ns="b")
    await create(store, "web", "b", app="web")
    await cacher.get_list(PREFIX, storage.ListOptions())
    scoped = await cacher.watch(f"{PREFIX}b/", "0")
    assert {e.object["metadata"]["namespace"] for e in await take(scoped, 21)} == {"b"}
    selected = await cacher.watch(PREFIX, "", lambda o: o["metadata"].get("labels", {}).get("app") == "web",
                                  send_initial_events=True, allow_bookmarks=True)
    events = await take(selected, 2)
    assert [(e.type, e.object["metadata"].get("name")) for e in events] == [("ADDED", "web"), ("BOOKMARK", None)]
    listed = await cacher.get_list(f"{PREFIX}a/", storage.ListOptions())
    assert [o["metadata"]["name"] for o in listed.items] == [f"cm-{i:05d}" for i in range(20)]
    for watcher in (scoped, selected):
        await watcher.stop()


@run
async def test_a_consistent_read_asks_for_progress_again_until_the_cache_is_fresh(store, cacher):
    """etcd drops a progress request that reaches a watcher still catching up, and a request coalesced into
    one already on its way may be answered early: as kube-apiserver's progress requester, a consistent read
    asks again (every 100 ms) while it waits, instead of timing out on one lost answer."""
    await cacher.get_list(PREFIX, storage.ListOptions(resource_version="0"))
    await store.create("/registry/secrets/ns/elsewhere", {"apiVersion": "v1", "kind": "Secret",
                                                           "metadata": {"name": "elsewhere", "namespace": "ns"}})
    asked = []
    request = store.request_watch_progress

    def first_one_lost() -> None:
        asked.append(True)
        if len(asked) > 1:
            request()

    store.request_watch_progress = first_one_lost
    listed = await cacher.get_list(PREFIX, storage.ListOptions())  # the newest revision: a secret's write
    assert len(asked) >= 2 and int(listed.resource_version) == await store.current_revision()
