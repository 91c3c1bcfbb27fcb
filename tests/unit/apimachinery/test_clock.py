"""apimachinery/clock.py: the fake clock's timers, the seeded ids, and the per-context sources that meta,
the registry's generateName and the work queue read."""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import threading
import uuid

import pytest

from kube_apiserver.apimachinery import clock, meta
from kube_apiserver.client.workqueue import WorkQueue
from kube_apiserver.registry.strategy import GENERATE_NAME_ALPHABET, generate_name

START = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


def test_a_fake_clock_stands_still_until_advanced_and_never_goes_back() -> None:
    fake = clock.FakeClock(START)
    assert fake.now() == START and fake.time() == START.timestamp() and fake.monotonic() == 0
    assert fake.advance(90) == START + datetime.timedelta(seconds=90)
    assert fake.advance(datetime.timedelta(minutes=1)) == START + datetime.timedelta(seconds=150)
    assert fake.monotonic() == 150
    with pytest.raises(ValueError, match="does not go back"):
        fake.advance(-1)
    with pytest.raises(ValueError, match="does not go back"):
        fake.set(START)
    assert fake.set(START + datetime.timedelta(hours=1)).isoformat() == "2025-01-01T01:00:00+00:00"


def test_timers_fire_in_deadline_order_once_the_clock_passes_them() -> None:
    async def main() -> list[str]:
        fake = clock.FakeClock(START)
        fired: list[str] = []
        fake.call_later(30, fired.append, "30s")
        fake.call_later(10, fired.append, "10s")
        cancelled = fake.call_later(20, fired.append, "cancelled")
        fake.call_later(60, fired.append, "60s")
        cancelled.cancel()
        fake.advance(29)
        await asyncio.sleep(0)
        assert fired == ["10s"]
        fake.advance(31)
        await asyncio.sleep(0)
        assert fake.pending() == 0
        return fired

    assert asyncio.run(main()) == ["10s", "30s", "60s"]


def test_a_sleep_ends_when_the_clock_is_advanced_from_another_thread() -> None:
    async def main() -> None:
        fake = clock.FakeClock(START)
        sleeping = asyncio.ensure_future(fake.sleep(5))
        await asyncio.sleep(0.01)
        assert not sleeping.done()  # real time passed, the clock's did not
        await asyncio.to_thread(fake.advance, 5)
        await asyncio.wait_for(sleeping, 5)

    asyncio.run(main())


def test_seeded_ids_depend_on_the_seed_and_the_name_not_on_the_order() -> None:
    one, other = clock.SeededIds(0), clock.SeededIds(0)
    first_a, first_b = one.uid("configmaps", "ns", "a"), one.uid("configmaps", "ns", "b")
    assert (other.uid("configmaps", "ns", "b"), other.uid("configmaps", "ns", "a")) == (first_b, first_a)
    assert uuid.UUID(first_a).version == 4
    assert one.uid("configmaps", "ns", "a") != first_a  # the name created again: a new UID
    assert clock.SeededIds(1).uid("configmaps", "ns", "a") != first_a
    suffix = one.name_suffix("ns", "web-")
    assert len(suffix) == 5 and set(suffix) <= set(GENERATE_NAME_ALPHABET)
    assert clock.SeededIds(0).name_suffix("ns", "web-") == suffix != one.name_suffix("ns", "web-")


def test_meta_and_generate_name_read_the_context_s_sources_and_the_real_ones_by_default() -> None:
    def seeded() -> tuple[str, str, str]:
        clock.install(clock.FakeClock(START), clock.SeededIds(7))
        return meta.now_rfc3339(), meta.new_uid("pods", "ns", "p"), generate_name("web-", "ns")

    first = contextvars.copy_context().run(seeded)
    assert first == contextvars.copy_context().run(seeded)
    assert first[0] == "2025-01-01T00:00:00Z"
    # Outside those contexts (and in other threads: other servers), the wall clock and uuid4.
    assert meta.now_rfc3339() != "2025-01-01T00:00:00Z"
    assert meta.new_uid("pods", "ns", "p") != first[1]
    elsewhere: list[clock.Clock] = []
    thread = threading.Thread(target=lambda: elsewhere.append(clock.current_clock()))
    thread.start()
    thread.join()
    assert not elsewhere[0].deterministic


def test_a_work_queue_delay_passes_on_the_context_s_clock() -> None:
    async def main() -> None:
        fake = clock.FakeClock(START)
        clock.install(fake, clock.SeededIds(0))
        queue: WorkQueue[str] = WorkQueue("test")
        queue.add_after("later", 60)
        await asyncio.sleep(0.02)
        assert len(queue) == 0
        fake.advance(59)
        await asyncio.sleep(0)
        assert len(queue) == 0
        fake.advance(1)
        assert await asyncio.wait_for(queue.get(), 5) == "later"
        queue.shut_down()

    asyncio.run(main())
