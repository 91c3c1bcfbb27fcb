"""The compactor (k8s storage/etcd3/compact.go): every interval, compact history up to the revision
seen at the previous interval, so a watch or paged list has at least one interval to catch up."""

from __future__ import annotations

import logging

from ..apimachinery.wait import Periodic
from .kv import KV

log = logging.getLogger("kube_apiserver.storage")


class Compactor:
    def __init__(self, kv: KV, interval: float):
        self.kv = kv
        self._previous: int | None = None
        self._periodic = Periodic("storage compaction", interval, self._compact)

    def start(self) -> None:
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def _compact(self) -> None:
        if self._previous is not None:
            await self.kv.compact(self._previous)
            log.info("compacted storage history up to revision %d", self._previous)
        self._previous = await self.kv.current_revision()
