"""Giving the event loop a turn between the CPU-heavy phases of one request (issue 11: no request starves the
others). A big patch or a deep apply runs as a few phases (decode, patch, field checks, managed fields), each a
synchronous walk of the object; once they have held the loop a while, the loop answers what arrived meanwhile
(/readyz, small GETs) before the next one. Small requests, whose phases take microseconds, never wait.

One phase of a huge object (a managed-fields apply, the schema validation of a 50,000-item array) holds the CPU
for up to a second by itself, so a big request runs its phases in a worker thread instead: while a thread
computes, the interpreter hands the event loop a turn every few milliseconds (sys.getswitchinterval). The
phases only read what other requests may be reading (the stored object, schemas) and change only their own
copy, so a thread may run them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..http import Request

T = TypeVar("T")

# As the sliced list writer's budget: phases that held the loop this long in all give way before the next one.
YIELD_AFTER_SECONDS = 0.005
# How long the loop is given: requests that arrived meanwhile are read, and those answered without waiting on
# anything (a health check, a GET from the cache) are answered, in the dozen iterations they take.
GIVE_WAY_SECONDS = 0.001
# Requests with bodies this large run their phases off the loop; below it a thread hop (tens of microseconds)
# costs more than the turns it would give.
OFF_LOOP_FROM_BYTES = 32 * 1024


class PhaseClock:
    """The loop time a request's phases have taken since it last gave way (or the clock started)."""

    def __init__(self, req: Request | None = None) -> None:
        self._since = time.monotonic()
        self._req = req

    @property
    def off_loop(self) -> bool:
        return self._req is not None and self._req.body_size >= OFF_LOOP_FROM_BYTES

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """One phase, `fn(*args)`: in a worker thread for a big request, else on the loop, which then gets a
        turn if the phases have held it a while."""
        if self.off_loop:
            result = await asyncio.to_thread(fn, *args)
            self._since = time.monotonic()
            return result
        result = fn(*args)
        await self.between_phases()
        return result

    def restart(self) -> None:
        """After a real wait (storage): the loop has had its turns since."""
        self._since = time.monotonic()

    async def between_phases(self) -> None:
        if time.monotonic() - self._since >= YIELD_AFTER_SECONDS:
            await asyncio.sleep(GIVE_WAY_SECONDS)
            self._since = time.monotonic()


def phase_clock(req: Request) -> PhaseClock:
    """The request's clock (kept in its values), shared by the handler's phases and the validation hooks."""
    clock = req.values.get("phase_clock")
    if clock is None:
        clock = req.values["phase_clock"] = PhaseClock(req)
    return clock
