"""Periodic work (k8s.io/apimachinery/pkg/util/wait.Until): run a function every interval until stopped;
a failing run is logged and tried again at the next interval."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from .clock import current_clock
from .runtime import log_failure

log = logging.getLogger("kube_apiserver")


async def cancel_and_wait(*tasks: asyncio.Task | asyncio.Future | None) -> None:
    """Cancels the tasks (None ones are skipped) and waits for each to end."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    for task in running:
        with contextlib.suppress(asyncio.CancelledError):
            await task


class Periodic:
    def __init__(self, name: str, interval: float, fn: Callable[[], Awaitable[None]], clocked: bool = False):
        """`clocked`: the interval passes on the server's clock (apimachinery/clock.py: under --deterministic,
        only when the test advances it), not on the event loop's."""
        self.name = name
        self.clocked = clocked
        self.interval = interval
        self.fn = fn
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.interval > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def _loop(self) -> None:
        while True:
            await (current_clock().sleep(self.interval) if self.clocked else asyncio.sleep(self.interval))
            try:
                await self.fn()
            except Exception:  # noqa: BLE001 - tried again at the next interval
                log_failure(log, "%s failed", self.name)
