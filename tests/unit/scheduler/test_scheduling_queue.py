"""The scheduling queue: priority then age, backoff doubling from 1 s to 10 s, unschedulable pods
moved back by cluster events (or after 5 minutes), scheduling gates, and the cache's assumed pods."""

from __future__ import annotations

import asyncio

from scheduler_fixtures import node, pod

from kube_apiserver.scheduler.cache import Cache
from kube_apiserver.scheduler.queue import SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_active_queue_pops_by_priority_then_age() -> None:
    async def main() -> list[str]:
        clock = Clock()
        queue = SchedulingQueue(clock)
        for name, priority in (("low", 0), ("high", 100), ("low2", 0)):
            queue.add(pod(name, priority=priority))
            clock.now += 1
        return [(await queue.pop()).pod["metadata"]["name"] for _ in range(3)]

    assert asyncio.run(main()) == ["high", "low", "low2"]


def test_backoff_doubles_to_ten_seconds() -> None:
    queue = SchedulingQueue(Clock())
    queue.add(pod("p"))
    info = queue.pods["default/p"]
    durations = []
    for attempts in range(1, 7):
        info.attempts = attempts
        durations.append(queue.backoff_duration(info))
    assert durations == [1, 2, 4, 8, 10, 10]


def test_unschedulable_pod_waits_for_a_cluster_event_then_its_backoff() -> None:
    async def main() -> None:
        clock = Clock()
        queue = SchedulingQueue(clock)
        queue.add(pod("p"))
        info = await queue.pop()
        queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
        assert queue.pending() == {"unschedulable": ["default/p"]}
        queue.move_all_to_active_or_backoff()
        assert queue.pending() == {"backoff": ["default/p"]}  # its 1 s backoff is not over
        clock.now += 1.5
        queue.flush_backoff_completed()
        assert queue.pending() == {"active": ["default/p"]}
        assert (await queue.pop()).attempts == 2

    asyncio.run(main())


def test_a_move_while_in_flight_sends_the_failed_pod_to_backoff() -> None:
    async def main() -> None:
        queue = SchedulingQueue(Clock())
        queue.add(pod("p"))
        info = await queue.pop()
        cycle = queue.scheduling_cycle
        queue.move_all_to_active_or_backoff()  # e.g. a node was added during the attempt
        queue.add_unschedulable_if_not_present(info, cycle)
        assert queue.pending() == {"backoff": ["default/p"]}

    asyncio.run(main())


def test_with_active_queue_empty_a_backing_off_pod_is_popped_at_once_unless_it_failed_with_an_error() -> None:
    async def main() -> None:
        queue = SchedulingQueue(Clock())
        queue.add(pod("p"))
        queue.add_unschedulable_if_not_present(await queue.pop(), queue.scheduling_cycle)
        queue.move_all_to_active_or_backoff()
        assert queue.pending() == {"backoff": ["default/p"]}
        assert (await queue.pop()).key == "default/p"  # SchedulerPopFromBackoffQ
        queue.add(pod("e"))
        failed = await queue.pop()
        queue.requeue_after_error(failed)
        queue.add(pod("q"))
        assert (await queue.pop()).key == "default/q"
        assert queue.pending() == {"in-flight": ["default/p", "default/q"], "backoff": ["default/e"]}

    asyncio.run(main())


def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    async def main() -> None:
        clock = Clock()
        queue = SchedulingQueue(clock)
        queue.add(pod("p"))
        queue.add_unschedulable_if_not_present(await queue.pop(), queue.scheduling_cycle)
        clock.now += 299
        queue.flush_unschedulable_left_over()
        assert queue.pending() == {"unschedulable": ["default/p"]}
        clock.now += 2
        queue.flush_unschedulable_left_over()
        assert queue.pending() == {"active": ["default/p"]}

    asyncio.run(main())


def test_gated_pod_stays_out_until_its_gates_are_removed() -> None:
    queue = SchedulingQueue(Clock())
    gated = pod("p", schedulingGates=[{"name": "example.com/wait"}])
    queue.add(gated)
    assert queue.pending() == {"unschedulable": ["default/p"]}
    queue.move_all_to_active_or_backoff()
    assert queue.pending() == {"unschedulable": ["default/p"]}
    queue.update(pod("p"))
    assert queue.pending() == {"active": ["default/p"]}


def test_a_status_only_update_leaves_an_unschedulable_pod_where_it_is() -> None:
    async def main() -> None:
        queue = SchedulingQueue(Clock())
        queue.add(pod("p"))
        queue.add_unschedulable_if_not_present(await queue.pop(), queue.scheduling_cycle)
        with_condition = pod("p")
        with_condition["metadata"]["resourceVersion"] = "7"
        with_condition["status"] = {"conditions": [{"type": "PodScheduled", "status": "False"}]}
        queue.update(with_condition)  # the scheduler's own write of PodScheduled=False
        assert queue.pending() == {"unschedulable": ["default/p"]}
        queue.update(pod("p", labels={"app": "web"}))
        assert queue.pending() == {"backoff": ["default/p"]}

    asyncio.run(main())


def test_deleted_pod_is_not_popped() -> None:
    async def main() -> str:
        queue = SchedulingQueue(Clock())
        queue.add(pod("gone"))
        queue.add(pod("kept"))
        queue.delete(pod("gone"))
        return (await queue.pop()).pod["metadata"]["name"]

    assert asyncio.run(main()) == "kept"


def test_cache_counts_assumed_pods_and_forgets_or_expires_them() -> None:
    clock = Clock()
    cache = Cache(clock, assumed_ttl=30)
    cache.add_node(node("a", cpu="2"))
    assumed = pod("p", cpu="1", node_name="a")
    cache.assume_pod(assumed)
    assert cache.nodes["a"].requested.milli_cpu == 1000
    cache.forget_pod(assumed)
    assert cache.nodes["a"].requested.milli_cpu == 0
    cache.assume_pod(assumed)
    cache.finish_binding(assumed)
    clock.now += 31
    assert cache.cleanup_expired_assumed_pods() == ["default/p"]
    assert cache.nodes["a"].requested.milli_cpu == 0
    cache.assume_pod(assumed)
    cache.add_pod(assumed)  # the informer saw it bound: confirmed, counted once, never expires
    cache.finish_binding(assumed)
    clock.now += 100
    assert cache.cleanup_expired_assumed_pods() == []
    assert cache.nodes["a"].requested.milli_cpu == 1000
    cache.remove_pod(assumed)
    assert cache.nodes["a"].requested.milli_cpu == 0
