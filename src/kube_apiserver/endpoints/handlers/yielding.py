"""Giving the event loop a turn between the CPU-heavy phases of one request (issue 11: no request starves the
others). A big patch or a deep apply runs as a few phases (decode, patch, field checks, managed fields), each a
synchronous walk of the object; once they have held the loop a while, the loop answers what arrived meanwhile
(/readyz, small GETs) before the next one. Small requests, whose phases take microseconds, never wait."""

from __future__ import annotations

import asyncio
import time
from typing import Any

# As the sliced list writer's budget: phases that held the loop this long in all give way before the next one.
YIELD_AFTER_SECONDS = 0.005
# How long the loop is given: requests that arrived meanwhile are read, and those answered without waiting on
# anything (a health check, a GET from the cache) are answered, in the dozen iterations they take.
GIVE_WAY_SECONDS = 0.001


class PhaseClock:
    """The loop time a request's phases have taken since it last gave way (or the clock started)."""

    def __init__(self) -> None:
        self._since = time.monotonic()

    def restart(self) -> None:
        """After a real wait (storage): the loop has had its turns since."""
        self._since = time.monotonic()

    async def between_phases(self) -> None:
        if time.monotonic() - self._since >= YIELD_AFTER_SECONDS:
            await asyncio.sleep(GIVE_WAY_SECONDS)
            self._since = time.monotonic()


def phase_clock(values: dict[str, Any]) -> PhaseClock:
    """The request's clock (kept in its values), shared by the handler's phases and the validation hooks."""
    clock = values.get("phase_clock")
    if clock is None:
        clock = values["phase_clock"] = PhaseClock()
    return clock
