"""The scheduling queue (pkg/scheduler/backend/queue PriorityQueue): activeQ pops the pod of highest
priority, then earliest; a pod that failed waits out its backoff (1 s doubling per attempt up to 10 s)
in backoffQ, or stays in unschedulablePods until a cluster event that may help (a node added or
changed, a pod deleted or bound) moves it back, or 5 minutes pass. A pod with scheduling gates waits
among the unschedulable pods, marked gated, until an update removes its last gate."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Object = dict[str, Any]
INITIAL_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0
MAX_IN_UNSCHEDULABLE_SECONDS = 300.0  # podMaxInUnschedulablePodsDuration
FLUSH_BACKOFF_EVERY = 1.0
FLUSH_UNSCHEDULABLE_EVERY = 30.0


def pod_key(pod: Object) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def pod_priority(pod: Object) -> int:
    priority = (pod.get("spec") or {}).get("priority")
    return priority if isinstance(priority, int) and not isinstance(priority, bool) else 0


def is_gated(pod: Object) -> bool:
    return bool((pod.get("spec") or {}).get("schedulingGates"))


def _stripped(pod: Object) -> Object:
    meta = {
        k: v
        for k, v in (pod.get("metadata") or {}).items()
        if k not in ("resourceVersion", "generation", "managedFields", "finalizers")
    }
    return {**{k: v for k, v in pod.items() if k != "status"}, "metadata": meta}


def pod_updated(old: Object, new: Object) -> bool:
    """isPodUpdated: a change besides status (the scheduler's own condition writes among them),
    resourceVersion, generation, managed fields and finalizers."""
    return _stripped(old) != _stripped(new)


@dataclass
class QueuedPodInfo:
    pod: Object
    timestamp: float  # when it was added, or last moved to activeQ
    attempts: int = 0
    initial_attempt: float | None = None
    gated: bool = False
    unschedulable_since: float = 0.0
    unschedulable_plugins: set[str] = field(default_factory=set)  # who rejected it last time
    seq: int = field(default=0)

    @property
    def key(self) -> str:
        return pod_key(self.pod)


class SchedulingQueue:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._seq = itertools.count()
        self._active: list[tuple[int, float, int, str]] = []  # (-priority, timestamp, seq, key)
        self._backoff: list[tuple[float, int, str]] = []  # (backoff expiry, seq, key)
        self._error_backoff: list[tuple[float, int, str]] = []  # podErrorBackoffQ: never popped early
        self.pods: dict[str, QueuedPodInfo] = {}  # every queued pod, wherever it waits
        self.where: dict[str, str] = {}  # key -> "active" | "backoff" | "unschedulable" | "in-flight"
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._ready = asyncio.Event()
        self._closed = False

    # ---- placing ----

    def _to_active(self, info: QueuedPodInfo) -> None:
        info.seq = next(self._seq)
        self.where[info.key] = "active"
        heapq.heappush(self._active, (-pod_priority(info.pod), info.timestamp, info.seq, info.key))
        self._ready.set()

    def _to_backoff(self, info: QueuedPodInfo, error: bool = False) -> None:
        info.seq = next(self._seq)
        self.where[info.key] = "backoff"
        heapq.heappush(
            self._error_backoff if error else self._backoff, (self.backoff_expiry(info), info.seq, info.key)
        )
        if not error:
            self._ready.set()  # poppable at once while activeQ is empty

    def _to_unschedulable(self, info: QueuedPodInfo) -> None:
        info.unschedulable_since = self.clock()
        self.where[info.key] = "unschedulable"

    def backoff_duration(self, info: QueuedPodInfo) -> float:
        if info.attempts <= 0:
            return 0.0
        return min(INITIAL_BACKOFF_SECONDS * 2 ** (info.attempts - 1), MAX_BACKOFF_SECONDS)

    def backoff_expiry(self, info: QueuedPodInfo) -> float:
        return info.timestamp + self.backoff_duration(info)

    def _backing_off(self, info: QueuedPodInfo) -> bool:
        return self.backoff_expiry(info) > self.clock()

    # ---- informer events ----

    def add(self, pod: Object) -> None:
        key = pod_key(pod)
        if key in self.pods:
            self.update(pod)
            return
        info = QueuedPodInfo(pod, self.clock(), gated=is_gated(pod))
        self.pods[key] = info
        if info.gated:
            self._to_unschedulable(info)
        else:
            self._to_active(info)

    def update(self, pod: Object) -> None:
        key = pod_key(pod)
        info = self.pods.get(key)
        if info is None:
            self.add(pod)
            return
        old, info.pod = info.pod, pod
        if self.where.get(key) == "unschedulable" and pod_updated(old, pod):
            info.gated = is_gated(pod)
            self._move(info)  # a change of the pod itself may make it schedulable (or ungate it)

    def delete(self, pod: Object) -> None:
        key = pod_key(pod)
        self.pods.pop(key, None)
        self.where.pop(key, None)  # heap entries of gone keys are skipped when popped

    def move_all_to_active_or_backoff(self, helps: frozenset[str] | None = None) -> None:
        """A cluster event that may make unschedulable pods schedulable: those rejected by one of the
        plugins in `helps` (any, when None)."""
        self.move_request_cycle = self.scheduling_cycle
        for key, place in list(self.where.items()):
            info = self.pods[key]
            if place != "unschedulable" or info.gated:
                continue
            if helps is None or not info.unschedulable_plugins or info.unschedulable_plugins & helps:
                self._move(info)

    def _move(self, info: QueuedPodInfo) -> None:
        if info.gated:
            self._to_unschedulable(info)
        elif self._backing_off(info):
            self._to_backoff(info)
        else:
            self._to_active(info)

    # ---- the scheduling loop ----

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule (None once closed); it stays in flight until done or requeued.
        With activeQ empty, the pod whose backoff ends first is taken from backoffQ without waiting
        it out (SchedulerPopFromBackoffQ, on by default since v1.33); pods backing off after an error
        are not."""
        while not self._closed:
            info = self._pop_valid(self._active, "active", lambda entry: entry[3])
            if info is None:
                info = self._pop_valid(self._backoff, "backoff", lambda entry: entry[2])
            if info is not None:
                self.where[info.key] = "in-flight"
                info.attempts += 1
                if info.initial_attempt is None:
                    info.initial_attempt = self.clock()
                self.scheduling_cycle += 1
                return info
            self._ready.clear()
            await self._ready.wait()
        return None

    def _pop_valid(self, heap: list[Any], place: str, key_of: Callable[[Any], str]) -> QueuedPodInfo | None:
        """The first entry of `heap` still current (entries of deleted or moved pods are dropped)."""
        while heap:
            entry = heapq.heappop(heap)
            key = key_of(entry)
            info = self.pods.get(key)
            if info is not None and self.where.get(key) == place and info.seq == entry[-2]:
                return info
        return None

    def done(self, info: QueuedPodInfo) -> None:
        """Scheduled (assumed): it leaves the queue."""
        if self.where.get(info.key) == "in-flight":
            self.pods.pop(info.key, None)
            self.where.pop(info.key, None)

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, cycle: int) -> None:
        """A failed attempt: back to backoffQ if a move request came while it was in flight, else to
        unschedulablePods."""
        if self.where.get(info.key) != "in-flight":
            return  # deleted meanwhile, or re-added by an update
        info.timestamp = self.clock()
        if self.move_request_cycle >= cycle:
            self._to_backoff(info)
        else:
            self._to_unschedulable(info)

    def requeue_after_error(self, info: QueuedPodInfo) -> None:
        """A failure that was not the pod's fault (binding refused, a server error): retry after backoff."""
        if self.where.get(info.key) not in ("in-flight", None):
            return
        info.timestamp = self.clock()
        self.pods[info.key] = info
        self._to_backoff(info, error=True)

    def flush_backoff_completed(self) -> None:
        now = self.clock()
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] <= now:
                _, seq, key = heapq.heappop(heap)
                info = self.pods.get(key)
                if info is not None and self.where.get(key) == "backoff" and info.seq == seq:
                    self._to_active(info)

    def flush_unschedulable_left_over(self) -> None:
        now = self.clock()
        for key, place in list(self.where.items()):
            info = self.pods[key]
            if (
                place == "unschedulable"
                and not info.gated
                and now - info.unschedulable_since > MAX_IN_UNSCHEDULABLE_SECONDS
            ):
                self._move(info)

    def close(self) -> None:
        self._closed = True
        self._ready.set()

    def pending(self) -> dict[str, list[str]]:
        """Where every queued pod waits (for tests and debugging)."""
        out: dict[str, list[str]] = {}
        for key, place in self.where.items():
            out.setdefault(place, []).append(key)
        return out
