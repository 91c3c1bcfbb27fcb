"""What the watch cache keeps per object and event: bounded, one copy (docs/memory.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kube_apiserver.storage.cacher.watch_cache import WatchCache
from kube_apiserver.storage.cacher.watcher import CacheWatcher
from kube_apiserver.storage.sqlite import SQLiteKV

PREFIX = "/registry/configmaps/"


def cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}


def test_the_ring_keeps_no_shared_watch_events_once_they_went_out() -> None:
    """A watcher given an event holds its shared WatchEvent (and the encoding written from it); the ring
    holding it too kept one encoded line per event for its 10,000 events."""

    async def main() -> None:
        cache = WatchCache()
        cache.replace({}, 1)
        watcher = CacheWatcher(PREFIX, None, lambda _w: None, lambda: cache.resource_version, 100)
        watcher.start_with_events([], 1)
        first = cache.process("ADDED", f"{PREFIX}ns/a", cm("a"), 2)
        watcher.add(first)
        assert first.variants  # shared by the watchers it goes to now
        second = cache.process("ADDED", f"{PREFIX}ns/b", cm("b"), 3)
        watcher.add(second)
        assert not first.variants
        assert second.variants
        # a watch starting before both still gets both, as they were
        late = CacheWatcher(PREFIX, None, lambda _w: None, lambda: cache.resource_version, 100)
        late.start_with_events(cache.events_after(1), 3)
        names = []
        async for event in late:
            names.append((event.type, event.object["metadata"]["name"], event.revision))
            if len(names) == 2:
                break
        assert names == [("ADDED", "a", 2), ("ADDED", "b", 3)]

    asyncio.run(main())


def managed(name: str) -> dict:
    obj = cm(name)
    obj["metadata"]["managedFields"] = [
        {
            "manager": "kubectl",
            "operation": "Update",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k1": {}, "f:k2": {}}},
        }
    ]
    obj["data"] = {"k1": "a", "k2": "b"}
    return obj


def test_cached_objects_written_alike_share_one_managed_fields_tree() -> None:
    """Each decoded fieldsV1 tree was a third of a small object's memory in the cache."""

    async def main() -> None:
        cache = WatchCache()
        cache.replace({f"{PREFIX}ns/a": managed("a"), f"{PREFIX}ns/b": managed("b")}, 1)
        cache.process("ADDED", f"{PREFIX}ns/c", managed("c"), 2)
        trees = [cache.objects[f"{PREFIX}ns/{n}"]["metadata"]["managedFields"][0]["fieldsV1"] for n in "abc"]
        assert trees[0] is trees[1] is trees[2]
        assert trees[0] == {"f:data": {"f:k1": {}, "f:k2": {}}}

    asyncio.run(main())


def test_each_sqlite_connection_caches_at_most_8_mib_of_pages(tmp_path: Path) -> None:
    """SQLite's page cache is the server's own memory: 64 MiB for each of its connections grew it by about 37 MiB
    per 10,000 ConfigMaps written (the operating system's file cache holds the database anyway)."""

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            conns = [kv._write_conn, kv._read_conn, kv._loop_conn]  # noqa: SLF001 - what each one caches
            sizes = [conn.execute("PRAGMA cache_size").fetchone()[0] for conn in conns]
            assert all(-8192 <= size < 0 for size in sizes), sizes  # negative: KiB
        finally:
            await kv.close()

    asyncio.run(main())
