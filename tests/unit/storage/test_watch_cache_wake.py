"""The watch cache wakes the requests waiting for it to be fresh once per batch of events processed in one
turn of the loop (a restore's thousand), not with a task per event, and every waiter still wakes."""

from __future__ import annotations

import asyncio

from kube_apiserver.storage.cacher.watch_cache import WatchCache
from kube_apiserver.storage.interface import ADDED

COUNT = 1000


def obj(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "namespace": "ns"}}


def test_a_batch_processed_in_one_turn_wakes_the_waiters_with_one_task() -> None:
    async def main() -> None:
        cache = WatchCache()
        cache.replace({}, 1)
        await asyncio.sleep(0)  # the replace's wake-up ran
        waiters = [asyncio.ensure_future(cache.wait_until_fresh(revision, 10)) for revision in (2, COUNT + 1)]
        await asyncio.sleep(0)  # both waiting
        before = len(asyncio.all_tasks())
        for i in range(COUNT):
            cache.process(ADDED, f"/registry/configmaps/ns/cm-{i}", obj(i), i + 2)
        assert len(asyncio.all_tasks()) - before == 1
        assert await asyncio.wait_for(asyncio.gather(*waiters), 10) == [True, True]
        cache.process(
            ADDED, "/registry/configmaps/ns/late", obj(-1), COUNT + 2
        )  # after the wake: woken again
        assert await asyncio.wait_for(cache.wait_until_fresh(COUNT + 2, 10), 10)

    asyncio.run(main())
