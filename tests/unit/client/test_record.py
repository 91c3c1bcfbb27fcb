"""The event recorder on the loopback client: Events as client-go's recorder writes them, a repeat
counted on the first, similar ones combined, a spamming source cut off, a full queue dropping."""

from __future__ import annotations

import asyncio
from pathlib import Path

from inprocess import in_process_server
from kube_apiserver.client.record import (
    COMBINED_PREFIX,
    MAX_QUEUED_EVENTS,
    NORMAL,
    SPAM_BURST,
    WARNING,
    EventBroadcaster,
    EventCorrelator,
    EventSource,
    event_name,
)

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web-0", "namespace": "default", "uid": "u-1", "resourceVersion": "7"}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u-2"}}
START = 1_790_000_000_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> int:
        return self.now


def _events(srv, namespace: str = "default"):  # noqa: ANN001, ANN202
    return srv.client.resource("", "v1", "events").namespace(namespace)


async def _started(srv, clock: Clock) -> EventBroadcaster:  # noqa: ANN001
    """A broadcaster on the server's loopback client, with the default namespace its events go to."""
    await srv.client.resource("", "v1", "namespaces").create({"metadata": {"name": "default"}})
    broadcaster = EventBroadcaster(srv.client, clock)
    broadcaster.start()
    return broadcaster


def test_an_event_is_written_as_client_go_writes_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            clock = Clock()
            broadcaster = await _started(srv, clock)
            recorder = broadcaster.new_recorder(EventSource("deployment-controller"))
            recorder.eventf(POD, NORMAL, "Scheduled", "Successfully assigned %s to %s", "default/web-0", "n1")
            recorder.event(NODE, WARNING, "NodeNotReady", "Node n1 status is now: NodeNotReady")
            await broadcaster.flush()
            pod_event = await _events(srv).get(f"web-0.{START:x}")
            assert pod_event["involvedObject"] == {"kind": "Pod", "namespace": "default", "name": "web-0",
                                                   "uid": "u-1", "apiVersion": "v1", "resourceVersion": "7"}
            assert pod_event["message"] == "Successfully assigned default/web-0 to n1"
            assert pod_event["count"] == 1 and pod_event["type"] == "Normal"
            assert pod_event["firstTimestamp"] == pod_event["lastTimestamp"] == "2026-09-21T14:13:20Z"
            assert pod_event["source"] == {"component": "deployment-controller"}
            assert pod_event["reportingComponent"] == "deployment-controller"
            # A cluster-scoped object's events go to the default namespace.
            node_event = await _events(srv).get(f"n1.{START:x}")
            assert node_event["type"] == "Warning" and node_event["involvedObject"]["name"] == "n1"
            await broadcaster.stop()

    asyncio.run(main())


def test_a_repeated_event_counts_on_the_first_and_a_spamming_source_is_cut_off(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            clock = Clock()
            broadcaster = await _started(srv, clock)
            recorder = broadcaster.new_recorder(EventSource("job-controller"))
            for i in range(SPAM_BURST + 5):
                clock.now = START + i * 1_000_000_000
                recorder.event(POD, WARNING, "BackOff", "Back-off restarting failed container")
            await broadcaster.flush()
            items = (await _events(srv).list())["items"]
            assert len(items) == 1
            assert items[0]["count"] == SPAM_BURST  # the 5 past the burst were filtered
            assert items[0]["firstTimestamp"] == "2026-09-21T14:13:20Z"
            assert items[0]["lastTimestamp"] == "2026-09-21T14:13:44Z"
            # Five minutes on, the source may say one more thing about the object.
            clock.now = START + 400 * 1_000_000_000
            recorder.event(POD, WARNING, "BackOff", "Back-off restarting failed container")
            await broadcaster.flush()
            items = (await _events(srv).list())["items"]
            # Its count includes the filtered ones: the correlator observed them (eventObserve comes first).
            assert [e["count"] for e in items] == [SPAM_BURST + 6]
            await broadcaster.stop()

    asyncio.run(main())


def test_an_event_deleted_meanwhile_is_created_again(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            clock = Clock()
            broadcaster = await _started(srv, clock)
            recorder = broadcaster.new_recorder(EventSource("c"))
            recorder.event(POD, NORMAL, "R", "m")
            await broadcaster.flush()
            await _events(srv).delete(f"web-0.{START:x}")
            recorder.event(POD, NORMAL, "R", "m")
            await broadcaster.flush()
            items = (await _events(srv).list())["items"]
            assert [(e["metadata"]["name"], e["count"]) for e in items] == [(f"web-0.{START:x}", 2)]
            await broadcaster.stop()

    asyncio.run(main())


def test_ten_similar_events_are_combined() -> None:
    clock = Clock()
    correlator = EventCorrelator(clock)
    recorder = EventBroadcaster(None, clock).new_recorder(EventSource("c"))  # type: ignore[arg-type]
    results = []
    for i in range(12):
        clock.now = START + i
        results.append(correlator.correlate(recorder._make_event(
            {"kind": "Pod", "name": "p", "namespace": "ns"}, None, NORMAL, "Failed", f"attempt {i}")))
    assert [r.event["message"] for r in results[:9]] == [f"attempt {i}" for i in range(9)]
    assert results[9].event["message"] == COMBINED_PREFIX + "attempt 9" and results[9].patch is None
    assert results[10].event["count"] == 2 and results[10].patch["message"] == COMBINED_PREFIX + "attempt 10"
    assert results[10].event["metadata"]["name"] == results[9].event["metadata"]["name"]


def test_events_past_the_queue_are_dropped_not_waited_for() -> None:
    async def main() -> None:
        broadcaster = EventBroadcaster(None, Clock())  # type: ignore[arg-type] - never started
        recorder = broadcaster.new_recorder(EventSource("c"))
        for i in range(MAX_QUEUED_EVENTS + 10):
            recorder.event(POD, NORMAL, "R", f"m{i}")
        assert broadcaster._queue.qsize() == MAX_QUEUED_EVENTS

    asyncio.run(main())


def test_event_names() -> None:
    assert event_name("web-0", 255) == "web-0.ff"
    assert len(event_name("UPPER", 1)) == 36  # not a valid name: a UUID
