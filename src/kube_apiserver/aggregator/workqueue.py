"""A rate-limited work queue of keys and its workers (client-go workqueue): a key queued several times
before a worker takes it is worked once; a failed key comes back after an exponential delay."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ..apimachinery.wait import cancel_and_wait

log = logging.getLogger("kube_apiserver.aggregator")
BASE_DELAY = 0.005  # NewTypedItemExponentialFailureRateLimiter(5ms, ...)
MAX_DELAY = 30.0


class WorkQueue:
    def __init__(self, name: str):
        self.name = name
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}

    def add(self, key: str) -> None:
        if key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:  # a key being worked is queued again when done
            self._queue.put_nowait(key)

    def add_rate_limited(self, key: str) -> None:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = min(BASE_DELAY * 2 ** failures, MAX_DELAY)
        asyncio.get_running_loop().call_later(delay, self.add, key)

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)

    async def get(self) -> str:
        key = await self._queue.get()
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.put_nowait(key)


class Workers:
    """`count` workers running `sync` for each key of `queue` until stopped."""

    def __init__(self, queue: WorkQueue, sync: Callable[[str], Awaitable[None]], count: int = 1):
        self.queue, self.sync, self.count = queue, sync, count
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._work()) for _ in range(self.count)]

    async def stop(self) -> None:
        await cancel_and_wait(*self._tasks)
        self._tasks = []

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                await self.sync(key)
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001 - retried later, as utilruntime.HandleError does
                log.info("%s: %s failed with: %s", self.queue.name, key, err)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)
