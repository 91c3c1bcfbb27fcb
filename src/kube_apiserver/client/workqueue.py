"""client-go's util/workqueue: the queue of keys every controller drains.

A key is in the queue at most once however often it is added (`dirty`), and never handed to two workers
at once: a key added while it is being processed (`processing`) goes back in when the worker is `done`
with it. Keys may be added after a delay (the earliest asked for wins) or after the rate limiter's delay,
which grows per key with its failures (5 ms doubling to 1000 s) and is bounded overall by a 10/s bucket
with a burst of 100: DefaultControllerRateLimiter.

A delay asked for (`add_after`: a CronJob's next schedule, a TTL's expiry) passes on the server's clock
(apimachinery/clock.py), which under --deterministic moves only when the test advances it; the rate
limiter's backoff after a failure passes on the event loop's, so a conflict is retried without the test's
help."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, Protocol, TypeVar

from ..apimachinery.clock import REAL, Clock, TimerHandle, current_clock

log = logging.getLogger("kube_apiserver.controllers")
T = TypeVar("T", bound=Hashable)


class QueueShutDown(Exception):
    """get() on a queue shut down with nothing left in it: the worker stops."""


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float:
        """Seconds to wait before the item is added again (counts a requeue)."""

    def forget(self, item: Hashable) -> None:
        """The item succeeded: its failures are forgotten."""

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """base * 2^failures, at most `cap`, per item."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0):
        self.base, self.cap = base, cap
        self.failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        failures = self.failures.get(item, 0)
        self.failures[item] = failures + 1
        if failures > 64:  # 2^64 * base is past any cap
            return self.cap
        return min(self.base * 2**failures, self.cap)

    def forget(self, item: Hashable) -> None:
        self.failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self.failures.get(item, 0)


class BucketRateLimiter:
    """A token bucket over every item (golang.org/x/time/rate's reservation: the delay until the token
    taken now would have been there)."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Callable[[], float] | None = None):
        self.qps, self.burst = qps, burst
        self.clock = clock or _monotonic
        self.tokens = float(burst)
        self.last = self.clock()

    def when(self, item: Hashable) -> float:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
        self.last = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / self.qps

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; every one counts the requeue."""

    def __init__(self, *limiters: RateLimiter):
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter() -> RateLimiter:
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100))


def _monotonic() -> float:
    return asyncio.get_running_loop().time()


class WorkQueue(Generic[T]):
    """A rate-limiting, delaying work queue (workqueue.NewTypedRateLimitingQueue). Used from one event
    loop; `get`, `done` and the adds need no lock."""

    def __init__(self, name: str = "", rate_limiter: RateLimiter | None = None):
        self.name = name
        self.rate_limiter = rate_limiter or default_controller_rate_limiter()
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._waiting: dict[T, TimerHandle] = {}  # add_after, on the server's clock
        self._backing_off: dict[T, TimerHandle] = {}  # add_rate_limited, on the loop's
        self._not_empty = asyncio.Event()
        self._shutting_down = False

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def add(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        if item in self._processing:
            return  # done() puts it back
        self._queue.append(item)
        self._not_empty.set()

    def add_after(self, item: T, delay: float) -> None:
        """The item is added in `delay` seconds of the server's clock; an earlier time already asked for wins."""
        self._add_after(item, delay, current_clock(), self._waiting)

    def _add_after(self, item: T, delay: float, clock: Clock, waiting: dict[T, TimerHandle]) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        ready_at = clock.monotonic() + delay
        earlier = waiting.get(item)
        if earlier is not None:
            if earlier.when() <= ready_at:
                return
            earlier.cancel()
        waiting[item] = clock.call_later(delay, self._ready, item, waiting)

    def _ready(self, item: T, waiting: dict[T, TimerHandle]) -> None:
        waiting.pop(item, None)
        self.add(item)

    def add_rate_limited(self, item: T) -> None:
        self._add_after(item, self.rate_limiter.when(item), REAL.clock, self._backing_off)

    def forget(self, item: T) -> None:
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)

    async def get(self) -> T:
        """The next item, now in processing until `done`; QueueShutDown once shut down and empty."""
        while not self._queue:
            if self._shutting_down:
                raise QueueShutDown(self.name)
            self._not_empty.clear()
            await self._not_empty.wait()
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: T) -> None:
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._not_empty.set()

    def shut_down(self) -> None:
        """No more adds; workers drain what is queued, then get() raises QueueShutDown."""
        self._shutting_down = True
        for waiting in (*self._waiting.values(), *self._backing_off.values()):
            waiting.cancel()
        self._waiting.clear()
        self._backing_off.clear()
        self._not_empty.set()


async def run_worker(queue: WorkQueue[T], sync: Callable[[T], Awaitable[None]], controller: str) -> None:
    """processNextWorkItem until the queue shuts down: a key whose sync raised is requeued rate limited,
    one that succeeded has its failures forgotten."""
    while True:
        try:
            item = await queue.get()
        except QueueShutDown:
            return
        try:
            await sync(item)
        except asyncio.CancelledError:
            queue.done(item)
            raise
        except Exception as err:  # noqa: BLE001 - requeued with backoff, as utilruntime.HandleError
            log.info("%s: error syncing %r, requeuing: %s", controller, item, err)
            queue.add_rate_limited(item)
        else:
            queue.forget(item)
        queue.done(item)
