"""The snapshots of past states a watch cache keeps for paged and exact lists (k8s ListFromCacheSnapshot).

kube-apiserver clones its B-tree at every event and keeps the clones as long as the event ring holds
what follows them. Here a past state is rebuilt from the current one and the ring when first asked for,
and kept a while, so every later page of the same list reuses it. Keeping is only a saving: a state the
ring still covers can always be rebuilt, so what is dropped here bounds memory, never correctness."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .watch_cache import Snapshot

# How long a kept snapshot lives unused: kube-apiserver's eventFreshDuration, the span its event ring
# (and so its snapshots) covers. A snapshot pins the objects it holds, deleted ones too.
SNAPSHOT_TTL = 75.0
# How many are kept at once: each costs two pointers per object of the resource.
MAX_SNAPSHOTS = 16


class KeptSnapshots:
    """Snapshots by the revision they show, least recently used dropped first."""

    def __init__(self, ttl: float = SNAPSHOT_TTL, capacity: int = MAX_SNAPSHOTS):
        self.ttl = ttl
        self.capacity = capacity
        self._by_revision: OrderedDict[int, tuple[Snapshot, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_revision)

    def get(self, revision: int, oldest: int) -> Snapshot | None:
        self.prune(oldest)
        kept = self._by_revision.get(revision)
        if kept is None:
            return None
        self._by_revision[revision] = (kept[0], time.monotonic())
        self._by_revision.move_to_end(revision)
        return kept[0]

    def keep(self, revision: int, snapshot: Snapshot, oldest: int) -> None:
        self._by_revision[revision] = (snapshot, time.monotonic())
        self._by_revision.move_to_end(revision)
        self.prune(oldest)

    def prune(self, oldest: int) -> None:
        """Drops what is expired, what the event ring no longer covers (as kube-apiserver drops a
        snapshot when the ring lets go of the events after it), and the least used beyond capacity."""
        expired_before = time.monotonic() - self.ttl
        for revision, (_, used) in list(self._by_revision.items()):
            if revision < oldest or used < expired_before:
                del self._by_revision[revision]
        while len(self._by_revision) > self.capacity:
            self._by_revision.popitem(last=False)

    def clear(self) -> None:
        self._by_revision.clear()
