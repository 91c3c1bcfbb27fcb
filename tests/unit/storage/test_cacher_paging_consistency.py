"""A consistent list from the watch cache is never older than what the storage's reads already show.

SQLite commits a batch on its writer thread; reads on other connections see the commit at once, but the
event loop learns of it (the revision it publishes, the events its watchers get) only when the write
loop resumes. A consistent list from the cache waits for the storage's current revision: when that was
the published one, a list right after a GET that saw the commit was served the state before it, without
ever yielding to the loop. ResourceQuota admission across replicas did exactly that (a 409 on the
quota's status write, then a live list from the cache, stale, a 409 again...) and, never yielding,
kept the write loop from publishing until its retries ran out: 409s and timeouts."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

PREFIX = "/registry/resourcequotas/"
KEY = f"{PREFIX}ns/q"
HOLD_TIMEOUT = 10.0  # seconds the writer is held at most, so that a failing test still ends


class HeldCommitKV(SQLiteKV):
    """Holds its writer thread after a commit while `hold` is set, until `release`: the commit is then
    visible to reads while the event loop has not learnt of it yet, as it is between any commit and the
    write loop's next turn."""

    def __init__(self, path: str, lock_fd: int | None = None):
        super().__init__(path, lock_fd)
        self.hold, self.committed, self.release = threading.Event(), threading.Event(), threading.Event()

    def _commit(self, batch, revision):  # type: ignore[no-untyped-def]
        out = super()._commit(batch, revision)
        if self.hold.is_set():
            self.committed.set()
            self.release.wait(HOLD_TIMEOUT)
        return out


def quota(used: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "ns"},
        "status": {"used": {"pods": used}},
    }


async def charge(store: ObjectStore, used: str) -> dict:
    async def change(obj: dict) -> dict:
        return {**obj, "status": {"used": {"pods": used}}}

    return await store.guaranteed_update(KEY, change)


async def until_committed(kv: HeldCommitKV) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HOLD_TIMEOUT
    while not kv.committed.is_set():
        assert loop.time() < deadline, "the write was never committed"
        await asyncio.sleep(0.001)


@pytest.mark.parametrize("limit", [0, 500], ids=["whole", "paged"])
def test_a_consistent_list_is_not_older_than_a_get_that_saw_a_commit(tmp_path, limit):
    async def main() -> None:
        kv = await HeldCommitKV.open(str(tmp_path))
        store = ObjectStore(kv)
        cacher = Cacher(store, PREFIX)
        cacher.start()
        try:
            await cacher.wait_ready()
            await store.create(KEY, quota("1"))
            await cacher.get_list(PREFIX, storage.ListOptions())  # the cache holds it
            kv.hold.set()
            write = asyncio.ensure_future(charge(store, "2"))
            await until_committed(kv)
            # A row the store's cache of point reads no longer holds (evicted) is read from the database,
            # which shows the commit already; a cached one shows the state the loop last learnt of.
            kv._rows.put(KEY, None)  # noqa: SLF001 - the eviction this scenario needs
            seen = await store.get(KEY)  # what the storage's reads show now: the charge
            assert seen["status"]["used"] == {"pods": "2"}
            assert await store.current_revision() >= int(seen["metadata"]["resourceVersion"])
            listing = asyncio.ensure_future(cacher.get_list(PREFIX, storage.ListOptions(limit=limit)))
            for _ in range(20):
                await asyncio.sleep(0)  # a list that would answer from the older state has answered now
            kv.release.set()
            listed = await listing
            await write
            assert [o["status"]["used"] for o in listed.items] == [{"pods": "2"}]
            assert listed.resource_version >= int(seen["metadata"]["resourceVersion"])
        finally:
            kv.release.set()
            await cacher.stop()
            await kv.close()

    asyncio.run(main())


def test_a_progress_request_during_a_commit_is_answered_again_once_it_is_published(tmp_path):
    """The revision a consistent read waits for counts a batch from its commit on, so the progress answer
    that lets the cache reach it comes when the batch is published, not at the cache's next request."""
    from kube_apiserver.storage.kv import prefix_end

    async def main() -> None:
        kv = await HeldCommitKV.open(str(tmp_path))
        other = "/registry/configmaps/ns/cm"  # a write the cache's watch has no event of
        stream = kv.watch(PREFIX, prefix_end(PREFIX), await kv.current_revision() + 1)
        first = asyncio.ensure_future(stream.__anext__())
        try:
            await asyncio.sleep(0)  # the watch is open
            kv.hold.set()
            write = asyncio.ensure_future(kv.create(other, b"{}"))
            await until_committed(kv)
            target = await kv.current_revision()
            kv.request_progress()
            kv.release.set()
            await write
            answered = []
            while not answered or answered[-1] < target:
                batch = await asyncio.wait_for(first if not answered else stream.__anext__(), HOLD_TIMEOUT)
                assert not batch.events
                answered.append(batch.revision)
            assert answered == [target - 1, target]
        finally:
            kv.release.set()
            first.cancel()
            await stream.aclose()
            await kv.close()

    asyncio.run(main())
