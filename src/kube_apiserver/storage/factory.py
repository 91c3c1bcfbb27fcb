"""StorageFactory: the storage each resource gets (k8s storage decorator): the shared object store,
behind a watch cache per resource unless the watch cache is disabled (--watch-cache=false)."""

from __future__ import annotations

from .cacher import Cacher
from .interface import Interface
from .objectstore import ObjectStore


class StorageFactory:
    def __init__(self, store: ObjectStore, watch_cache: bool = True, event_ttl: float = 3600.0,
                 overrides: dict[str, ObjectStore] | None = None):
        self.store = store
        self.overrides = overrides or {}  # --etcd-servers-overrides: a resource's key prefix -> its own store
        self.watch_cache = watch_cache
        self.event_ttl = event_ttl  # --event-ttl: how long an event lives after its last write
        self.cachers: dict[str, Cacher] = {}
        self.resources: dict[str, tuple[str, str]] = {}  # key prefix -> (group, resource): what to count

    def store_for(self, key_prefix: str) -> ObjectStore:
        return self.overrides.get(key_prefix.rstrip("/"), self.store)

    def for_resource(self, key_prefix: str, group_resource: tuple[str, str] | None = None) -> Interface:
        if group_resource is not None:
            self.resources[key_prefix.rstrip("/")] = group_resource
        store = self.store_for(key_prefix)
        if not self.watch_cache:
            return store
        cacher = self.cachers.get(key_prefix)
        if cacher is None:
            cacher = self.cachers[key_prefix] = Cacher(store, key_prefix)
            cacher.start()
        return cacher

    async def release(self, key_prefix: str) -> None:
        """Stops the watch cache of a resource that is no longer served (a deleted custom resource)."""
        cacher = self.cachers.pop(key_prefix, None)
        if cacher is not None:
            await cacher.stop()

    async def stop(self) -> None:
        for cacher in self.cachers.values():
            await cacher.stop()
