"""The scheduler's events.k8s.io/v1 recorder against an in-process server: the fields kube-scheduler's
recorder sets, and a repeat of the same event becoming a series instead of a second Event."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scheduler_fixtures import pod

from inprocess import controller_cluster
from kube_apiserver.scheduler.events import EventRecorder, truncate_message


def test_repeated_event_becomes_a_series(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller_cluster(str(tmp_path), lambda c: []) as srv:
            client = srv.client
            created = await client.resource("", "v1", "pods").namespace("default").create(pod("p"))
            recorder = EventRecorder(client, "default-scheduler")
            recorder.start()
            try:
                for _ in range(3):
                    recorder.eventf(created, "Warning", "FailedScheduling", "Scheduling", "0/0 nodes")
                await recorder.flush()
            finally:
                await recorder.stop()
            events = client.resource("events.k8s.io", "v1", "events").namespace("default")
            [event] = (await events.list())["items"]
            assert event["regarding"]["name"] == "p" and event["regarding"]["kind"] == "Pod"
            assert (event["reportingController"], event["action"], event["type"]) == (
                "default-scheduler",
                "Scheduling",
                "Warning",
            )
            assert event["reportingInstance"].startswith("default-scheduler-")
            assert event["series"]["count"] == 2  # later repeats are counted in memory only
            assert event["note"] == "0/0 nodes"

    asyncio.run(main())


def test_long_notes_are_truncated_as_kube_scheduler_does() -> None:
    assert truncate_message("x" * 1024) == "x" * 1024
    assert truncate_message("x" * 2000) == "x" * 1020 + " ..."
