"""The controllers' work queue: deduplicated keys, never processed twice at once, delayed and rate-limited
adds, shutdown."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.client.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    QueueShutDown,
    WorkQueue,
    run_worker,
)


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(coro)


def test_a_key_added_twice_is_queued_once() -> None:
    async def main() -> None:
        queue: WorkQueue[str] = WorkQueue()
        queue.add("a")
        queue.add("b")
        queue.add("a")
        assert len(queue) == 2
        assert [await queue.get(), await queue.get()] == ["a", "b"]

    run(main())


def test_a_key_added_while_processing_comes_back_once_done() -> None:
    async def main() -> None:
        queue: WorkQueue[str] = WorkQueue()
        queue.add("a")
        item = await queue.get()
        queue.add("a")  # changed again while a worker has it: not handed to a second worker
        queue.add("a")
        assert len(queue) == 0
        queue.done(item)
        assert len(queue) == 1
        assert await queue.get() == "a"
        queue.done("a")
        assert len(queue) == 0

    run(main())


def test_get_waits_for_an_add() -> None:
    async def main() -> None:
        queue: WorkQueue[str] = WorkQueue()
        getter = asyncio.ensure_future(queue.get())
        await asyncio.sleep(0)
        assert not getter.done()
        queue.add("x")
        assert await asyncio.wait_for(getter, 1) == "x"

    run(main())


def test_add_after_keeps_the_earliest_time() -> None:
    async def main() -> None:
        queue: WorkQueue[str] = WorkQueue()
        queue.add_after("a", 30)
        queue.add_after("a", 0.01)
        queue.add_after("a", 60)
        assert len(queue) == 0
        assert await asyncio.wait_for(queue.get(), 1) == "a"

    run(main())


def test_shut_down_drains_then_ends_the_workers() -> None:
    async def main() -> None:
        queue: WorkQueue[str] = WorkQueue()
        queue.add("a")
        queue.add_after("late", 0.01)
        queue.shut_down()
        queue.add("b")  # refused once shutting down
        assert await queue.get() == "a"
        with pytest.raises(QueueShutDown):
            await queue.get()
        await asyncio.sleep(0.02)
        assert len(queue) == 0  # the delayed add was dropped too

    run(main())


def test_exponential_failure_backoff_per_item_and_forget() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1.0)
    assert [limiter.when("a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert limiter.when("b") == 0.005
    assert limiter.num_requeues("a") == 4
    for _ in range(10):
        limiter.when("a")
    assert limiter.when("a") == 1.0  # capped
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0 and limiter.when("a") == 0.005


def test_bucket_allows_the_burst_then_spaces_by_qps() -> None:
    now = [0.0]
    bucket = BucketRateLimiter(qps=10, burst=3, clock=lambda: now[0])
    assert [bucket.when(i) for i in range(3)] == [0, 0, 0]
    assert bucket.when(3) == pytest.approx(0.1)
    assert bucket.when(4) == pytest.approx(0.2)
    now[0] = 10.0  # refilled up to the burst
    assert bucket.when(5) == 0


def test_max_of_limiters() -> None:
    now = [0.0]
    limiter = MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000),
                               BucketRateLimiter(qps=10, burst=1, clock=lambda: now[0]))
    assert limiter.when("a") == 0.005
    assert limiter.when("a") == pytest.approx(0.1)  # the bucket's delay is the longer
    assert limiter.num_requeues("a") == 2


def test_a_worker_requeues_failures_with_backoff_and_forgets_successes() -> None:
    async def main() -> None:
        queue: WorkQueue[str] = WorkQueue()
        calls: list[str] = []

        async def sync(key: str) -> None:
            calls.append(key)
            if key == "flaky" and calls.count("flaky") < 3:
                raise RuntimeError("not yet")

        worker = asyncio.ensure_future(run_worker(queue, sync, "test"))
        queue.add("flaky")
        queue.add("fine")
        for _ in range(200):
            if calls.count("flaky") == 3:
                break
            await asyncio.sleep(0.01)
        assert calls.count("flaky") == 3 and calls.count("fine") == 1
        await asyncio.sleep(0)
        assert queue.num_requeues("flaky") == 0  # forgotten once it succeeded
        queue.shut_down()
        await asyncio.wait_for(worker, 1)

    run(main())
