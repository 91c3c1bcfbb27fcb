"""client-go's tools/record: the Events controllers write about the objects they act on.

`recorder.event(obj, "Normal", "ScalingReplicaSet", "Scaled up ...")` never blocks: the event is queued
(at most 1000; more are dropped, as the broadcaster's channel drops them) and written by the
broadcaster's task through the loopback client, after the correlator (events_cache.go):
- a source may write 25 events about one object, then one more every 5 minutes (the spam filter);
- the same event again (same source, object, type, reason and message) is a patch of the first one's
  count, lastTimestamp and message, not a new Event;
- 10 events differing only in message within 10 minutes become one "(combined from similar events): ..."
  event, counted from then on.
A write that fails for want of the server is retried 12 times, 10 s apart (the first sleep random);
one the server answers with an error is dropped."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import current_clock, current_ids
from ..apimachinery.validation import is_dns1123_subdomain
from ..apimachinery.wait import cancel_and_wait
from .rest import STRATEGIC_MERGE_PATCH, Client

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]

NORMAL, WARNING = "Normal", "Warning"
MAX_QUEUED_EVENTS = 1000
MAX_TRIES_PER_EVENT = 12
SLEEP_SECONDS = 10.0
LRU_CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_SECONDS = 600
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
COMBINED_PREFIX = "(combined from similar events): "


@dataclass(frozen=True)
class EventSource:
    component: str
    host: str = ""


def object_reference(obj: Object, field_path: str = "") -> Object:
    """ref.GetReference: what an Event's involvedObject says of the object."""
    meta = obj.get("metadata") or {}
    ref = {"kind": obj.get("kind", ""), "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
           "uid": meta.get("uid", ""), "apiVersion": obj.get("apiVersion", ""),
           "resourceVersion": meta.get("resourceVersion", ""), "fieldPath": field_path}
    return {k: v for k, v in ref.items() if v}


def event_name(ref_name: str, unix_nano: int) -> str:
    """util.GenerateEventName: `<name>.<nanoseconds in hex>`, or a random UUID when that is not a valid name."""
    name = f"{ref_name}.{unix_nano:x}"
    if is_dns1123_subdomain(name):
        return current_ids().uid("events", "", ref_name)
    return name


def clock_ns() -> int:
    """The server's clock (apimachinery/clock.py) in nanoseconds since the epoch."""
    return int(current_clock().time() * 1_000_000_000)


def _time(unix_nano: int) -> str:
    return datetime.fromtimestamp(unix_nano // 1_000_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _LRU(OrderedDict):
    """golang-lru's cache: the least recently used entry goes when it is full."""

    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def get_recent(self, key: Hashable) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.size:
            self.popitem(last=False)


def _involved(event: Object, *fields: str) -> list[str]:
    ref = event.get("involvedObject") or {}
    return [ref.get(f, "") for f in fields]


def _source(event: Object) -> list[str]:
    source = event.get("source") or {}
    return [source.get("component", ""), source.get("host", "")]


def event_key(event: Object) -> str:
    return "".join([*_source(event), *_involved(event, "kind", "namespace", "name", "fieldPath", "uid", "apiVersion"),
                    event.get("type", ""), event.get("reason", ""), event.get("message", "")])


def spam_key(event: Object) -> str:
    return "".join([*_source(event), *_involved(event, "kind", "namespace", "name", "uid", "apiVersion"),
                    event.get("type", "")])


def aggregate_key(event: Object) -> str:
    return "".join([*_source(event), *_involved(event, "kind", "namespace", "name", "uid", "apiVersion"),
                    event.get("type", ""), event.get("reason", ""), event.get("reportingComponent", ""),
                    event.get("reportingInstance", "")])


@dataclass
class _Bucket:
    """A passive token bucket (flowcontrol.NewTokenBucketPassiveRateLimiter): TryAccept never waits."""

    tokens: float
    last: float

    def try_accept(self, now: float, qps: float, burst: int) -> bool:
        self.tokens = min(burst, self.tokens + (now - self.last) * qps)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class _Observed:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclass
class _Aggregate:
    messages: set[str] = field(default_factory=set)
    last: float = 0.0


@dataclass
class Correlation:
    event: Object
    patch: Object | None = None
    skip: bool = False


class EventCorrelator:
    """EventCorrelate: aggregate, then deduplicate into a patch, then the spam filter."""

    def __init__(self, clock: Callable[[], int] | None = None):
        self.clock = clock or clock_ns  # nanoseconds since the epoch
        self._spam: _LRU = _LRU(LRU_CACHE_ENTRIES)
        self._aggregates: _LRU = _LRU(LRU_CACHE_ENTRIES)
        self._observed: _LRU = _LRU(LRU_CACHE_ENTRIES)

    def correlate(self, event: Object) -> Correlation:
        aggregated, key = self._aggregate(event)
        observed, patch = self._observe(aggregated, key)
        if self._filtered(observed):
            return Correlation(observed, skip=True)
        return Correlation(observed, patch)

    def _aggregate(self, event: Object) -> tuple[Object, str]:
        now = self.clock()
        key = aggregate_key(event)
        record = self._aggregates.get_recent(key)
        if record is None or now / 1e9 - record.last > AGGREGATE_INTERVAL_SECONDS:
            record = _Aggregate()
        record.messages.add(event.get("message", ""))
        record.last = now / 1e9
        self._aggregates.put(key, record)
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return event, event_key(event)
        record.messages.pop()
        stamp = _time(now)
        combined = {"metadata": {"name": f"{event['involvedObject'].get('name', '')}.{now:x}",
                                 "namespace": event["metadata"]["namespace"]},
                    "involvedObject": event["involvedObject"], "reason": event.get("reason", ""),
                    "message": COMBINED_PREFIX + event.get("message", ""), "source": event.get("source", {}),
                    "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1, "type": event.get("type", "")}
        return combined, key

    def _observe(self, event: Object, key: str) -> tuple[Object, Object | None]:
        last = self._observed.get_recent(key)
        patch = None
        if last is not None:
            event = {**event, "metadata": {**event["metadata"], "name": last.name,
                                           "resourceVersion": last.resource_version},
                     "firstTimestamp": last.first_timestamp, "count": last.count + 1}
            # CreateTwoWayMergePatch from the event with no count, lastTimestamp or message.
            patch = {"count": event["count"], "lastTimestamp": event["lastTimestamp"]}
            if event.get("message"):
                patch["message"] = event["message"]
        self._remember(key, event)
        return event, patch

    def _remember(self, key: str, event: Object) -> None:
        meta = event["metadata"]
        self._observed.put(key, _Observed(event.get("count", 1), event.get("firstTimestamp", ""),
                                          meta.get("name", ""), meta.get("resourceVersion", "")))

    def update_state(self, event: Object) -> None:
        """The server's answer: its name and resourceVersion are what the next patch refers to."""
        self._remember(event_key(event), event)

    def _filtered(self, event: Object) -> bool:
        key = spam_key(event)
        now = self.clock() / 1e9
        bucket = self._spam.get_recent(key) or _Bucket(float(SPAM_BURST), now)
        accepted = bucket.try_accept(now, SPAM_QPS, SPAM_BURST)
        self._spam.put(key, bucket)
        return not accepted


class EventRecorder:
    """What a controller holds: `event(obj, type, reason, message)`, non-blocking."""

    def __init__(self, broadcaster: EventBroadcaster, source: EventSource):
        self.broadcaster = broadcaster
        self.source = source

    def event(self, obj: Object, event_type: str, reason: str, message: str,
              annotations: dict[str, str] | None = None, field_path: str = "") -> None:
        """`field_path`: the part of the object the event is about (kubelet's spec.containers{name})."""
        if event_type not in (NORMAL, WARNING):
            log.error("Unsupported event type: %r", event_type)
            return
        self.broadcaster.action_or_drop(self._make_event(object_reference(obj, field_path), annotations,
                                                         event_type, reason, message))

    def eventf(self, obj: Object, event_type: str, reason: str, message_format: str, *args: Any) -> None:
        self.event(obj, event_type, reason, message_format % args if args else message_format)

    def _make_event(self, ref: Object, annotations: dict[str, str] | None, event_type: str, reason: str,
                    message: str) -> Object:
        now = self.broadcaster.clock()
        ref_name = ref.get("name", "")
        name = event_name(ref_name, self.broadcaster.name_nanos(ref_name, now))
        meta: Object = {"name": name, "namespace": ref.get("namespace") or "default"}
        if annotations:
            meta["annotations"] = dict(annotations)
        stamp = _time(now)
        event = {"apiVersion": "v1", "kind": "Event", "metadata": meta, "involvedObject": ref, "reason": reason,
                 "message": message, "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
                 "type": event_type, "source": {k: v for k, v in (("component", self.source.component),
                                                                   ("host", self.source.host)) if v},
                 "reportingComponent": self.source.component, "reportingInstance": self.source.host}
        return event


class EventBroadcaster:
    """record.NewBroadcaster + StartRecordingToSink on the loopback client: one task writes the queued
    events in order. `clock` (nanoseconds since the epoch) is what the events' names and times come from."""

    def __init__(self, client: Client, clock: Callable[[], int] | None = None, sleep_seconds: float = SLEEP_SECONDS):
        self.client = client
        self.clock = clock or clock_ns
        self._last_names: OrderedDict[str, int] = OrderedDict()  # object name -> its last event's nanoseconds
        self.sleep_seconds = sleep_seconds
        self.correlator = EventCorrelator(self.clock)
        self._queue: asyncio.Queue[Object] = asyncio.Queue(MAX_QUEUED_EVENTS)
        self._task: asyncio.Task[None] | None = None

    def name_nanos(self, ref_name: str, now: int) -> int:
        """The nanoseconds an event's name is made of: now, or one more than the object's last event's when the
        clock stood still (--deterministic), so two events of one object at one instant keep distinct names."""
        last = self._last_names.pop(ref_name, None)
        nanos = now if last is None else max(now, last + 1)
        self._last_names[ref_name] = nanos
        if len(self._last_names) > LRU_CACHE_ENTRIES:
            self._last_names.popitem(last=False)
        return nanos

    def new_recorder(self, source: EventSource) -> EventRecorder:
        return EventRecorder(self, source)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._record_to_sink())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    def action_or_drop(self, event: Object) -> None:
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            log.error("Unable to record event: too many queued events, dropped event %s",
                      event["metadata"]["name"])

    async def flush(self) -> None:
        """Waits until every event queued so far was written or given up (for tests and shutdown)."""
        await self._queue.join()

    async def _record_to_sink(self) -> None:
        while True:
            event = await self._queue.get()
            try:
                await self._record(event)
            finally:
                self._queue.task_done()

    async def _record(self, event: Object) -> None:
        result = self.correlator.correlate(event)
        if result.skip:
            return
        for tries in range(1, MAX_TRIES_PER_EVENT + 1):
            if await self._write(result.event, result.patch):
                return
            if tries == MAX_TRIES_PER_EVENT:
                log.error("Unable to write event %s (retry limit exceeded!)", result.event["metadata"]["name"])
                return
            await asyncio.sleep(self.sleep_seconds * (random.random() if tries == 1 else 1))

    async def _write(self, event: Object, patch: Object | None) -> bool:
        """recordEvent: True once written or refused for good, False to retry."""
        events = self.client.resource("", "v1", "events").namespace(event["metadata"]["namespace"])
        try:
            written = None
            if patch is not None:
                try:
                    written = await events.patch(event["metadata"]["name"], patch, STRATEGIC_MERGE_PATCH)
                except errors.StatusError as err:
                    if err.code != 404:
                        raise
            if written is None:  # new, or the one to count on is gone
                event = {**event, "metadata": {k: v for k, v in event["metadata"].items() if k != "resourceVersion"}}
                written = await events.create(event)
        except errors.StatusError as err:  # the server answered: the same request would get the same
            level = logging.DEBUG if err.code == 409 else logging.ERROR
            log.log(level, "Server rejected event %s: %s (will not retry!)", event["metadata"]["name"], err)
            return True
        except OSError as err:  # TimeoutError and connection errors
            log.info("Unable to write event %s: %s (may retry after sleeping)", event["metadata"]["name"], err)
            return False
        self.correlator.update_state(written)
        return True
