"""The compactor (k8s storage/etcd3/compact.go): every interval, compact history up to the revision
seen at the previous interval, so a watch or paged list has at least one interval to catch up.

Several apiservers may share one store: each interval they race a compare-and-swap on the
`compact_rev_key` key, and only the one whose swap succeeds compacts (upstream compares the key's
version; its mod revision tells the same: whether anyone wrote it since this compactor last looked)."""

from __future__ import annotations

import logging

from ..apimachinery.wait import Periodic
from .kv import KV

log = logging.getLogger("kube_apiserver.storage")

COMPACT_REV_KEY = "compact_rev_key"  # outside the key prefix, as kube-apiserver keeps it


class Compactor:
    def __init__(self, kv: KV, interval: float):
        self.kv = kv
        self._seen = 0  # compact_rev_key's mod revision when this compactor last looked (0: absent)
        self._revision = 0  # the store's revision at the previous interval
        self._periodic = Periodic("storage compaction", interval, self.compact_once)

    def start(self) -> None:
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def compact_once(self) -> None:
        """One interval: claim it with the swap, then compact to the revision of the previous one."""
        value = str(self._revision).encode()
        if self._seen:
            result = await self.kv.update(COMPACT_REV_KEY, value, self._seen)
        else:
            result = await self.kv.create(COMPACT_REV_KEY, value)
        if not result.succeeded:  # another apiserver compacts this interval; try again at the next one
            self._seen = result.current.mod_revision if result.current is not None else 0
            self._revision = result.revision
            return
        self._seen = result.revision
        previous, self._revision = self._revision, result.revision
        if previous:  # none on the first interval: nothing was seen an interval ago
            await self.kv.compact(previous)
            log.info("compacted storage history up to revision %d", previous)
