"""The server's sources of time and of new identifiers (k8s.io/utils/clock, and the uuid and random name
suffixes of the registry), so that `--deterministic` can replace both.

- `RealClock` is the wall clock and the event loop's timers; `RandomIds` gives uuid4 UIDs and random
  generateName suffixes. They are the defaults, and what every server without `--deterministic` uses.
- `FakeClock` stands still until `advance()`/`set()`; its sleeps and timers fire, in deadline order, when
  the clock passes their deadline. `SeededIds` derives UIDs and suffixes from a seed and from what is being
  named, so two runs of the same writes name everything alike even when concurrent creations commit in
  another order.

Several servers run in one process (each on its own loop in its own thread), so the pair in use is no
module-level setting: it lives in a context variable that a server sets (`install`) in its root task before
it starts anything; its tasks, callbacks and `asyncio.to_thread` phases inherit it. Code reads it through
`current_clock()` / `current_ids()` at the moment it needs a time or a name."""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import hashlib
import heapq
import itertools
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

UTC = datetime.UTC
# The registry's generateName suffix: 5 characters from an alphabet without vowels (no words) nor 0/1/3
# (no look-alikes), as k8s.io/apiserver/pkg/storage/names.
NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NAME_SUFFIX_LENGTH = 5
DEFAULT_DETERMINISTIC_START = datetime.datetime(2025, 1, 1, tzinfo=UTC)


class TimerHandle(Protocol):
    def cancel(self) -> None: ...

    def when(self) -> float:
        """The deadline, on the clock's monotonic() scale."""


class Clock(Protocol):
    deterministic: bool

    def now(self) -> datetime.datetime:
        """The current time, UTC, timezone-aware."""

    def time(self) -> float:
        """Seconds since the epoch."""

    def monotonic(self) -> float:
        """Seconds on a scale that never goes back (the scale of the timers' when())."""

    async def sleep(self, seconds: float) -> None: ...

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        """callback(*args) on the running loop once `delay` seconds have passed on this clock."""


class RealClock:
    """The wall clock; sleeps and timers are the event loop's."""

    deterministic = False

    def now(self) -> datetime.datetime:
        return datetime.datetime.now(UTC)

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return time.monotonic()  # no loop in this thread (a phase in a worker thread): uvloop's scale

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback, *args)


class FakeTimer:
    """A FakeClock timer: fires on its loop, in the context it was created in, once the clock reaches it."""

    __slots__ = ("_deadline", "_callback", "_args", "_loop", "_context", "cancelled")

    def __init__(
        self,
        deadline: float,
        callback: Callable[..., Any],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
    ):
        self._deadline = deadline
        self._callback, self._args = callback, args
        self._loop = loop
        self._context = contextvars.copy_context()
        self.cancelled = False

    def when(self) -> float:
        return self._deadline

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        if self.cancelled or self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._callback, *self._args, context=self._context)


class FakeClock:
    """Time that moves only when told. monotonic() counts the seconds advanced since the start. Timers
    whose deadline the clock passes fire in deadline order (ties: creation order) on their own loop, so
    `advance` may be called from any thread."""

    deterministic = True

    def __init__(self, start: datetime.datetime = DEFAULT_DETERMINISTIC_START):
        if start.tzinfo is None:
            raise ValueError("the start of a FakeClock must be timezone-aware")
        self._start = start.timestamp()
        self._elapsed = 0.0
        self._timers: list[tuple[float, int, FakeTimer]] = []
        self._sequence = itertools.count()
        self._lock = threading.Lock()

    def now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.time(), UTC)

    def time(self) -> float:
        return self._start + self._elapsed

    def monotonic(self) -> float:
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        woken = asyncio.get_running_loop().create_future()
        timer = self.call_later(seconds, _wake, woken)
        try:
            await woken
        finally:
            timer.cancel()

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        loop = asyncio.get_running_loop()
        with self._lock:
            timer = FakeTimer(self._elapsed + max(delay, 0.0), callback, args, loop)
            if delay <= 0:
                due = [timer]
            else:
                heapq.heappush(self._timers, (timer.when(), next(self._sequence), timer))
                due = []
        for each in due:
            each.fire()
        return timer

    def advance(self, seconds: float | datetime.timedelta) -> datetime.datetime:
        """Moves the clock forward (never back: ValueError) and fires the timers now due; returns now()."""
        if isinstance(seconds, datetime.timedelta):
            seconds = seconds.total_seconds()
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"a clock does not go back: cannot advance by {seconds}s")
        with self._lock:
            self._elapsed += seconds
            due = []
            while self._timers and self._timers[0][0] <= self._elapsed:
                due.append(heapq.heappop(self._timers)[2])
        for timer in due:
            timer.fire()
        return self.now()

    def set(self, when: datetime.datetime) -> datetime.datetime:
        """Moves the clock to `when` (timezone-aware, not before now())."""
        if when.tzinfo is None:
            raise ValueError("the time to set must be timezone-aware")
        return self.advance(when.timestamp() - self.time())

    def pending(self) -> int:
        """Timers not yet fired nor cancelled (for tests)."""
        with self._lock:
            return sum(1 for _, _, timer in self._timers if not timer.cancelled)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class IdSource(Protocol):
    deterministic: bool

    def uid(self, resource: str = "", namespace: str = "", name: str = "") -> str:
        """A new UID for what is named (an object's resource, namespace and name; or a purpose)."""

    def name_suffix(self, namespace: str, prefix: str) -> str:
        """The random part of a generated name."""


class RandomIds:
    deterministic = False

    def uid(self, resource: str = "", namespace: str = "", name: str = "") -> str:
        return str(uuid.uuid4())

    def name_suffix(self, namespace: str, prefix: str) -> str:
        return "".join(random.choices(NAME_SUFFIX_ALPHABET, k=NAME_SUFFIX_LENGTH))


class SeededIds:
    """UIDs and suffixes hashed from (seed, what is named, how many times it was named before). The count is
    per name, not global: objects created concurrently keep their own UIDs whichever commits first, and a
    name created again (after a deletion, or a generateName conflict) gets a new one."""

    deterministic = True

    def __init__(self, seed: int = 0):
        self.seed = seed
        self._counts: dict[tuple[str, ...], int] = {}
        self._lock = threading.Lock()  # phases of big requests run in worker threads

    def _digest(self, *parts: str) -> bytes:
        with self._lock:
            n = self._counts.get(parts, 0)
            self._counts[parts] = n + 1
        text = "\x00".join((str(self.seed), *parts, str(n)))
        return hashlib.sha256(text.encode()).digest()

    def uid(self, resource: str = "", namespace: str = "", name: str = "") -> str:
        return str(uuid.UUID(bytes=self._digest("uid", resource, namespace, name)[:16], version=4))

    def name_suffix(self, namespace: str, prefix: str) -> str:
        digest = self._digest("generateName", namespace, prefix)
        return "".join(
            NAME_SUFFIX_ALPHABET[b % len(NAME_SUFFIX_ALPHABET)] for b in digest[:NAME_SUFFIX_LENGTH]
        )


@dataclass(frozen=True, slots=True)
class Sources:
    clock: Clock
    ids: IdSource


REAL = Sources(RealClock(), RandomIds())  # stateless: safe to share between servers
_SOURCES: contextvars.ContextVar[Sources] = contextvars.ContextVar(
    "kube_apiserver_time_sources", default=REAL
)


def current_clock() -> Clock:
    return _SOURCES.get().clock


def current_ids() -> IdSource:
    return _SOURCES.get().ids


def install(clock: Clock, ids: IdSource) -> contextvars.Token[Sources]:
    """The clock and ids of the current context and of every task and callback started from it after."""
    return _SOURCES.set(Sources(clock, ids))


def restore(token: contextvars.Token[Sources]) -> None:
    _SOURCES.reset(token)


def deterministic(seed: int = 0, start: datetime.datetime = DEFAULT_DETERMINISTIC_START) -> Sources:
    return Sources(FakeClock(start), SeededIds(seed))


# Readers that are handy as default arguments (`clock: Callable[[], float] = wall_time`): each call reads
# the context's clock, unlike a default bound to time.time.
def wall_time() -> float:
    return current_clock().time()


def wall_now() -> datetime.datetime:
    return current_clock().now()


def monotonic() -> float:
    return current_clock().monotonic()
