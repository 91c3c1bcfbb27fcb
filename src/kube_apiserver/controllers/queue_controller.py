"""The lifecycle every queue-driven controller shares (the Run method of each of kube-controller-manager's
controllers): register informer handlers, start the informers, and run `workers` workers that wait for
every informer to have synced before taking keys from the queue; stop shuts the queue and the workers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..client.informers import SharedIndexInformer
from ..client.record import EventRecorder
from ..client.rest import Client
from ..client.workqueue import WorkQueue, run_worker


class QueueController:
    """A base for controllers: a subclass calls `__init__` (name, client, recorder, workers, queue), sets
    `informers` (what must have synced before the first sync) and implements `register_handlers` and
    `sync_handler` (upstream's syncHandler)."""

    name: str
    client: Client
    recorder: EventRecorder
    queue: WorkQueue[Any]
    workers: int
    informers: Sequence[SharedIndexInformer]

    def __init__(
        self,
        name: str,
        client: Client,
        recorder: EventRecorder | None,
        workers: int,
        queue_name: str | None = None,
    ):
        """`queue_name` names the work queue where upstream names it apart from the controller."""
        self.name = name
        self.client = client
        if recorder is not None:  # controllers that record no events have none
            self.recorder = recorder
        self.workers = workers
        self.queue = WorkQueue(queue_name or name)

    def register_handlers(self) -> None:
        raise NotImplementedError

    async def sync_handler(self, key: Any) -> None:
        raise NotImplementedError

    def worker_syncs(self) -> Sequence[Callable[[], Awaitable[None]]]:
        """What the controller runs once its informers synced: `workers` queue workers, and any loop a
        subclass adds (resyncs, periodic checks)."""
        return [self._work] * self.workers

    async def start(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []
        self.register_handlers()
        for informer in self.informers:
            informer.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._after_sync(run)) for run in self.worker_syncs()]

    async def _after_sync(self, run: Callable[[], Awaitable[None]]) -> None:
        for informer in self.informers:
            await informer.synced.wait()
        await run()

    async def _work(self) -> None:
        await run_worker(self.queue, self.sync_handler, f"{self.name} controller")

    async def stop(self) -> None:
        self.queue.shut_down()
        tasks, self._tasks = getattr(self, "_tasks", []), []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
