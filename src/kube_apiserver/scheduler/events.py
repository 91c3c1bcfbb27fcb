"""The scheduler's Events, written through events.k8s.io/v1 as kube-scheduler's recorder
(client-go tools/events) writes them: reportingController default-scheduler, reportingInstance
default-scheduler-<host>, an action (Scheduling, Binding), eventTime. The same event again (same
object, action, reason, note) within 6 minutes becomes a series: the first repeat patches the Event's
series (count 2); later repeats count in memory only (upstream writes them every 30 minutes, not here).
Writes are queued (at most 1000) and made by one task; a refused write is dropped."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..apimachinery import errors
from ..apimachinery.wait import cancel_and_wait
from ..client.record import clock_ns, object_reference
from ..client.rest import MERGE_PATCH, Client

log = logging.getLogger("kube_apiserver.scheduler")
Object = dict[str, Any]
MAX_QUEUED = 1000
SERIES_WINDOW_SECONDS = 6 * 60
CACHE_ENTRIES = 4096
NOTE_LENGTH_LIMIT = 1024


def truncate_message(message: str) -> str:
    """truncateMessage: a note longer than the 1024 events.k8s.io allows ends in " ..." at the limit."""
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[: NOTE_LENGTH_LIMIT - len(" ...")] + " ..."


def micro_time(unix_nano: int) -> str:
    return datetime.fromtimestamp(unix_nano / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventRecorder:
    def __init__(self, client: Client, controller: str, clock: Callable[[], int] = clock_ns):
        self.client = client
        self.controller = controller
        self.instance = f"{controller}-{socket.gethostname()}"
        self.clock = clock
        self._queue: asyncio.Queue[Object] = asyncio.Queue(MAX_QUEUED)
        self._seen: OrderedDict[tuple[Any, ...], tuple[Object, int]] = OrderedDict()  # key -> (event, count)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._write_loop())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def flush(self) -> None:
        await self._queue.join()

    def eventf(self, regarding: Object, event_type: str, reason: str, action: str, note: str) -> None:
        """Never blocks; a full queue drops the event, as the broadcaster's channel does."""
        now = self.clock()
        ref = object_reference(regarding)
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{ref.get('name', '')}.{now:x}",
                "namespace": ref.get("namespace") or "default",
            },
            "eventTime": micro_time(now),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "regarding": ref,
            "note": truncate_message(note),
            "type": event_type,
        }
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            log.error(
                "Unable to record event: too many queued events, dropped event %s", event["metadata"]["name"]
            )

    def _series(self, event: Object) -> Object | None:
        """The event to write (a new one, or the first repeat with its series), or None."""
        key = (
            tuple(sorted(event["regarding"].items())),
            event["action"],
            event["reason"],
            event["note"],
            event["type"],
        )
        now = self.clock()
        seen = self._seen.get(key)
        if seen is not None and (now - seen[1]) / 1e9 <= SERIES_WINDOW_SECONDS:
            first, _ = seen
            self._seen[key] = (first, now)
            series = first.get("series")
            if series is not None:
                series["count"] += 1
                series["lastObservedTime"] = micro_time(now)
                return None
            first["series"] = {"count": 2, "lastObservedTime": micro_time(now)}
            return first
        self._seen[key] = (event, now)
        self._seen.move_to_end(key)
        while len(self._seen) > CACHE_ENTRIES:
            self._seen.popitem(last=False)
        return event

    async def _write_loop(self) -> None:
        while True:
            event = await self._queue.get()
            try:
                await self._write(event)
            except Exception:  # noqa: BLE001 - the recorder outlives any one bad write
                log.exception("Unable to write event")
            finally:
                self._queue.task_done()

    async def _write(self, event: Object) -> None:
        to_write = self._series(event)
        if to_write is None:
            return
        events = self.client.resource("events.k8s.io", "v1", "events").namespace(
            to_write["metadata"]["namespace"]
        )
        try:
            if "series" in to_write:
                await events.patch(to_write["metadata"]["name"], {"series": to_write["series"]}, MERGE_PATCH)
            else:
                await events.create(to_write)
        except errors.StatusError as err:
            log.log(
                logging.DEBUG if err.code == 409 else logging.ERROR,
                "Server rejected event %s: %s (will not retry!)",
                to_write["metadata"]["name"],
                err,
            )
        except OSError as err:
            log.info("Unable to write event %s: %s", to_write["metadata"]["name"], err)
