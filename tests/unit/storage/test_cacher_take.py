"""A CacheWatcher read without awaiting (take/notify), as a watch handler writing to its connection reads
it: the same events in the same order as the iterator, the same bounds and the same endings."""

from __future__ import annotations

import asyncio

from cachertesting import with_cacher
from kube_apiserver.storage import interface as storage

PREFIX = "/registry/configmaps/"
run = with_cacher(PREFIX)


async def create(store, name: str) -> dict:
    return await store.create(f"{PREFIX}ns/{name}", {"apiVersion": "v1", "kind": "ConfigMap",
                                                      "metadata": {"name": name, "namespace": "ns"}})


def take_all(watcher, limit: int = 7) -> list:
    events = []
    while watcher.pending:
        events.extend(watcher.take(limit))
    return events


@run
async def test_take_gives_the_initial_state_in_batches_then_live_events(store, cacher):
    for i in range(20):
        await create(store, f"cm-{i:02d}")
    await cacher.get_list(PREFIX, storage.ListOptions())
    watcher = await cacher.watch(PREFIX, "", send_initial_events=True, allow_bookmarks=True)
    wakes = []
    watcher.notify(lambda: wakes.append(1))
    assert len(watcher.take(7)) == 7  # at most `limit` initial items a call
    rest = take_all(watcher)
    assert [e.type for e in rest] == ["ADDED"] * 13 + ["BOOKMARK"]
    await create(store, "live")
    await asyncio.sleep(0.05)
    assert wakes and watcher.pending
    assert [(e.type, e.object["metadata"]["name"]) for e in watcher.take(7)] == [("ADDED", "live")]
    assert not watcher.pending and not watcher.ended
    await watcher.stop()
    assert watcher.ended


@run
async def test_a_watcher_read_by_take_that_falls_behind_is_closed_without_slowing_others(store, cacher):
    cacher.watcher_buffer = 10
    start = str(await store.current_revision())
    slow = await cacher.watch(PREFIX, start)
    fast = await cacher.watch(PREFIX, start)
    closed = []
    slow.notify(lambda: closed.append(slow.ended) if slow not in cacher.watchers else None)
    got = []
    fast.notify(lambda: got.extend(fast.take(100)))
    for i in range(30):
        await create(store, f"cm-{i}")
    await asyncio.sleep(0.05)
    assert len(got) == 30 and slow not in cacher.watchers and closed
    assert len(take_all(slow)) == 10 and slow.ended  # what was buffered, then the end
    await fast.stop()


@run
async def test_closed_before_its_initial_state_is_out_it_ends_at_once(store, cacher):
    for i in range(20):
        await create(store, f"cm-{i:02d}")
    await cacher.get_list(PREFIX, storage.ListOptions())
    watcher = await cacher.watch(PREFIX, "0")
    assert len(watcher.take(5)) == 5
    watcher.close()
    assert watcher.take(5) == [] and watcher.ended
