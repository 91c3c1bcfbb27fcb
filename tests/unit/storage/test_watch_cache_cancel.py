"""A wait for the watch cache's freshness that is cancelled ends cancelled, even when the cache becomes fresh in
the same turn: a list whose client left (or a stopping controller's) must not run on. Python 3.11's
asyncio.wait_for returned the result instead, and a test kubelet's loop never stopped."""

from __future__ import annotations

import asyncio

from kube_apiserver.storage.cacher.watch_cache import WatchCache


async def _cancelled_after(turns: int) -> str:
    cache = WatchCache()
    waiter = asyncio.ensure_future(cache.wait_until_fresh(5, 10))
    for _ in range(3):
        await asyncio.sleep(0)  # waiting on the condition
    cache.resource_version = 5
    cache._notify()
    for _ in range(turns):
        await asyncio.sleep(0)
    if waiter.done():
        return "done before the cancel"
    waiter.cancel()
    try:
        await waiter
    except asyncio.CancelledError:
        return "cancelled"
    return "ran on after its cancel"


def test_a_cancelled_freshness_wait_ends_cancelled_whatever_the_turn():
    outcomes = [asyncio.run(_cancelled_after(turns)) for turns in range(8)]
    assert "ran on after its cancel" not in outcomes, outcomes
    assert "cancelled" in outcomes
