"""The watch cache on a storage whose answers to progress requests cannot be trusted (etcd before 3.4.31
and 3.5.13: the answer may overtake events still on their way, etcd-io/etcd#15220, seen by the HA fault
test as a consistent list that lacked an acknowledged create). As kube-apiserver does then, the cache never
asks: consistent lists are served by the storage, and a watch from a revision the cache has not reached
starts at once, its initial state read from the storage, without the events it already holds twice."""

from __future__ import annotations

import asyncio
import subprocess
from collections import deque
from typing import Any

from etcd import ETCD, free_port
from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.etcd3 import EtcdKV
from kube_apiserver.storage.etcd3.kv import version_supports_progress_requests
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

PREFIX = "/registry/configmaps/"


class UntrustedProgressKV(SQLiteKV):
    progress_requests_supported = False  # as EtcdKV reports on etcd 3.4.23


class OvertakingStream:
    """A storage watch as etcd before 3.4.31 may deliver it: progress notifications pass, the events
    behind them are held until released."""

    def __init__(self, stream: Any):
        self.stream = stream
        self.held: deque[Any] = deque()
        self.released = False

    def __aiter__(self) -> OvertakingStream:
        return self

    async def __anext__(self) -> Any:
        while True:
            if self.released and self.held:
                return self.held.popleft()
            event = await self.stream.__anext__()
            if event.type == storage.BOOKMARK:
                return event
            self.held.append(event)


def cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}


def run(test: Any) -> Any:
    """`async test(store, cacher, streams)` on a started cache whose storage watch overtakes its events."""

    def wrapper(tmp_path: Any) -> None:
        async def main() -> None:
            kv = await UntrustedProgressKV.open(str(tmp_path))
            store = ObjectStore(kv)
            streams: list[OvertakingStream] = []
            watch = store.watch

            async def overtaking_watch(*args: Any, **kwargs: Any) -> OvertakingStream:
                streams.append(OvertakingStream(await watch(*args, **kwargs)))
                return streams[-1]

            store.watch = overtaking_watch  # type: ignore[method-assign]
            cacher = Cacher(store, PREFIX)
            cacher.start()
            try:
                await cacher.get_list(PREFIX, storage.ListOptions(resource_version="0"))  # ready
                await asyncio.wait_for(test(store, cacher, streams), 10)
            finally:
                await cacher.stop()
                await kv.close()

        asyncio.run(main())

    wrapper.__name__ = test.__name__
    return wrapper


async def release(store: ObjectStore, streams: list[OvertakingStream]) -> dict:
    """The held events come, then one more write's."""
    streams[-1].released = True
    return await store.create(f"{PREFIX}ns/after", cm("after"))


async def names(watcher: Any, count: int) -> list[str]:
    events = [await asyncio.wait_for(watcher.__anext__(), 5) for _ in range(count)]
    return [f"{e.type} {e.object['metadata'].get('name', '')}" for e in events]


@run
async def test_a_consistent_list_is_served_by_the_storage(store, cacher, streams):
    await store.create(f"{PREFIX}ns/acked", cm("acked"))
    listed = await cacher.get_list(PREFIX, storage.ListOptions())
    assert [o["metadata"]["name"] for o in listed.items] == ["acked"]
    assert int(listed.resource_version) == await store.current_revision()


@run
async def test_a_consistent_watch_list_starts_from_the_storage_and_skips_what_it_holds(
    store, cacher, streams
):
    await store.create(f"{PREFIX}ns/acked", cm("acked"))
    watcher = await cacher.watch(PREFIX, "", send_initial_events=True, allow_bookmarks=True)
    assert await names(watcher, 2) == ["ADDED acked", "BOOKMARK "]
    await release(store, streams)
    assert await names(watcher, 1) == ["ADDED after"]  # not `acked` again
    await watcher.stop()


@run
async def test_a_watch_from_a_revision_ahead_of_the_cache_starts_at_once(store, cacher, streams):
    created = await store.create(f"{PREFIX}ns/acked", cm("acked"))
    watcher = await cacher.watch(PREFIX, created["metadata"]["resourceVersion"])
    await release(store, streams)
    assert await names(watcher, 1) == ["ADDED after"]
    await watcher.stop()


def test_the_etcd_releases_whose_progress_answers_are_trusted():
    """kube-apiserver's endpointSupportsRequestWatchProgress."""
    for version in ("3.4.31", "3.4.40", "3.5.13", "3.5.21", "3.6.0", "v3.6.4", "3.7.0-alpha.0"):
        assert version_supports_progress_requests(version), version
    for version in ("3.4.23", "3.4.30", "3.4.31-rc.0", "3.5.0", "3.5.12", "3.3.27", "", "3.5", "latest"):
        assert not version_supports_progress_requests(version), version


def test_etcd_kv_asks_every_member_its_version(etcd):
    """What the members run decides; one that cannot answer (here: nothing listens) does not hold the
    start up, and is asked again in the background."""
    installed = subprocess.run([ETCD, "--version"], capture_output=True, text=True, timeout=30)
    version = installed.stdout.split("etcd Version:")[1].split()[0]

    async def main() -> None:
        kv = await asyncio.wait_for(EtcdKV.open([*etcd.client_urls, f"http://127.0.0.1:{free_port()}"]), 20)
        try:
            assert kv.progress_requests_supported == version_supports_progress_requests(version)
            assert len(kv._status_checks) == 1  # the silent member, asked again
        finally:
            await kv.close()

    asyncio.run(main())
