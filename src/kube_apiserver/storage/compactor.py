"""The compactor (k8s storage/etcd3/compact.go): every interval, compact history up to the revision
seen at the previous interval, so a watch or paged list has at least one interval to catch up."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from .kv import KV

log = logging.getLogger("kube_apiserver.storage")


class Compactor:
    def __init__(self, kv: KV, interval: float):
        self.kv = kv
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.interval > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        previous = await self.kv.current_revision()
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.kv.compact(previous)
                log.info("compacted storage history up to revision %d", previous)
            except Exception:  # noqa: BLE001 - tried again next interval
                log.exception("storage compaction failed")
            previous = await self.kv.current_revision()
