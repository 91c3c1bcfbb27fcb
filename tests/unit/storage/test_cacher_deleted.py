"""A watch cache's DELETED events: the object is the state the delete ended, at the delete's revision, taken
from the cache instead of decoded again, unless the same batch wrote the key before deleting it (the cache
has not taken that write yet when the batch is transformed)."""

from __future__ import annotations

import asyncio

from cachertesting import with_cacher
from kube_apiserver.storage import kv as kvs

PREFIX = "/registry/configmaps/"
KEY = PREFIX + "ns/a"


def cm(value: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}, "data": {"k": value}}


async def next_events(watcher, count: int) -> list:
    events = []
    async for event in watcher:
        events.append(event)
        if len(events) == count:
            return events
    return events


@with_cacher(PREFIX)
async def test_a_delete_is_the_cached_last_state_without_a_decode(store, cacher):
    created = await store.create(KEY, cm("1"))
    start = str(await store.current_revision())
    watcher = await cacher.watch(PREFIX, str(int(start) - 1))
    await store.kv.delete(KEY, int(created["metadata"]["resourceVersion"]))
    added, gone = await asyncio.wait_for(next_events(watcher, 2), 10)
    assert (added.type, gone.type) == ("ADDED", "DELETED")
    assert gone.object["data"] == {"k": "1"} and gone.object["metadata"]["name"] == "a"
    assert gone.object["metadata"]["resourceVersion"] == str(gone.revision) != created["metadata"]["resourceVersion"]
    assert gone.object["data"] is added.object["data"]  # the cached object's, not a decode's
    # the cache's own copy was not touched
    assert created["metadata"]["resourceVersion"] == added.object["metadata"]["resourceVersion"]
    await watcher.stop()


@with_cacher(PREFIX)
async def test_a_key_written_then_deleted_in_one_batch_is_deleted_as_last_written(store, cacher):
    created = await store.create(KEY, cm("1"))
    watcher = await cacher.watch(PREFIX, created["metadata"]["resourceVersion"])
    revision = int(created["metadata"]["resourceVersion"])
    updated = store.codec.encode(cm("2"))
    results = await store.kv.write_many(
        [kvs.Write(kvs.UPDATE, KEY, updated, revision), kvs.Write(kvs.DELETE_KEY, KEY, b"", revision + 1)]
    )
    assert all(r.succeeded for r in results)
    modified, gone = await asyncio.wait_for(next_events(watcher, 2), 10)
    assert (modified.type, modified.object["data"]) == ("MODIFIED", {"k": "2"})
    assert (gone.type, gone.object["data"]) == ("DELETED", {"k": "2"})
    await watcher.stop()
