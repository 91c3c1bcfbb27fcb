"""Cacher: storage.Interface with LIST and WATCH served from a WatchCache (k8s cacher.go).

Writes and GETs go to the underlying storage. One storage watch per resource feeds the cache; every
client watch is a CacheWatcher fed from it, so a commit is decoded once however many watch it."""

from __future__ import annotations

import asyncio
import logging

from .. import continue_token
from .. import interface as storage
from ..interface import (
    BOOKMARK,
    DeleteValidation,
    ListOptions,
    ListResult,
    Object,
    Preconditions,
    Predicate,
    TooLargeResourceVersionError,
    TTLFunc,
    UpdateFunc,
)
from ..objectstore import ObjectStore
from .paging import list_page
from .watch_cache import WatchCache
from .watcher import DEFAULT_BUFFER, CacheWatcher

log = logging.getLogger("kube_apiserver.storage")
FRESHNESS_TIMEOUT = 3.0  # how long a request waits for the cache to reach a resourceVersion
PROGRESS_REQUEST_INTERVAL = 0.1  # how often it asks the storage for progress meanwhile


class Cacher:
    def __init__(self, store: ObjectStore, key_prefix: str):
        self.store = store
        self.key_prefix = key_prefix.rstrip("/") + "/"
        self.cache = WatchCache()
        self.watchers: set[CacheWatcher] = set()
        self.watcher_buffer = DEFAULT_BUFFER  # live events a watcher may fall behind by before it is closed
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # ---- lifecycle ----

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for watcher in list(self.watchers):
            watcher.close()

    async def _run(self) -> None:
        while True:
            try:
                await self._list_and_watch()
            except asyncio.CancelledError:
                raise
            except ConnectionError as err:  # the store is out of reach: a fact of operation, not a bug
                log.warning("watch cache of %s: %s; relisting", self.key_prefix, err)
            except Exception:  # noqa: BLE001 - relist after any failure, as the reflector does
                log.exception("watch cache of %s failed; relisting", self.key_prefix)
            self._ready.clear()
            for watcher in list(self.watchers):
                watcher.close()  # they resume from their resourceVersion against the new cache
            await asyncio.sleep(1)

    async def _list_and_watch(self) -> None:
        listed = await self.store.get_list(self.key_prefix, ListOptions())
        objects = {self._key(o): o for o in listed.items}
        self.cache.replace(objects, listed.resource_version)
        stream = await self.store.watch(self.key_prefix, str(listed.resource_version), progress_notify=True,
                                        deleted=self._last_state)
        self._ready.set()
        async for event in stream:
            if event.type == BOOKMARK:
                self.cache.progress(event.revision)
                continue
            cached = self.cache.process(event.type, self._key(event.object), event.object, event.revision)
            for watcher in list(self.watchers):
                watcher.add(cached)

    def _last_state(self, key: str, revision: int) -> Object | None:
        """A deleted object as the cache holds it (the state the delete ends), at the delete's revision: a
        reset of a thousand objects decodes none of them again."""
        obj = self.cache.objects.get(key)
        if obj is None:
            return None
        return {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": str(revision)}}

    def _key(self, obj: Object) -> str:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace")
        return f"{self.key_prefix}{namespace}/{meta['name']}" if namespace else f"{self.key_prefix}{meta['name']}"

    async def wait_ready(self) -> None:
        """Until the cache holds its first list (upstream's Cacher.ready)."""
        await self._ready.wait()

    async def _wait_fresh(self, revision: int) -> None:
        await self._ready.wait()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FRESHNESS_TIMEOUT
        while self.cache.resource_version < revision:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TooLargeResourceVersionError(revision, self.cache.resource_version)
            # Asked again while waiting, as kube-apiserver's progress requester does: etcd drops a request
            # that reaches a watcher still catching up, so one answer may never come. Without trustworthy
            # answers the cache is only waited for, never asked (an early answer would make it lie).
            if self.store.progress_requests_supported:
                self.store.request_watch_progress()
            await self.cache.wait_until_fresh(revision, min(PROGRESS_REQUEST_INTERVAL, remaining))

    async def _consistent_revision(self, resource_version: str) -> int:
        """The revision a request must see: the latest committed one when it asked for none."""
        if resource_version == "":
            return await self.store.current_revision()
        return int(resource_version)

    # ---- reads served from the cache ----

    async def get_list(self, key_prefix: str, opts: ListOptions) -> ListResult:
        """Which lists the cache serves, as kube-apiserver's shouldDelegateList with ListFromCacheSnapshot:
        every kind but the ones at a revision the cache no longer holds, which the storage's history
        answers (or refuses: 410 once compacted)."""
        rv, match = opts.resource_version, opts.resource_version_match
        if not self._ready.is_set() and opts.limit > 0 and opts.predicate_empty:
            return await self.store.get_list(key_prefix, opts)  # shouldDelegateListOnNotReadyCache
        if match == "Exact":
            return await self._list_exact(key_prefix, int(rv), key_prefix, opts)
        if match == "" and opts.continue_token:
            start, revision = continue_token.decode(opts.continue_token, key_prefix)
            if revision > 0:
                return await self._list_exact(key_prefix, revision, start, opts)
            return await self._list_consistent(key_prefix, start, opts)  # a token of the latest state (-1)
        if match == "" and opts.limit > 0 and rv not in ("", "0"):
            return await self._list_exact(key_prefix, int(rv), key_prefix, opts)  # the legacy exact match
        if match == "" and rv == "":
            return await self._list_consistent(key_prefix, key_prefix, opts)
        if match not in ("", "NotOlderThan"):
            return await self.store.get_list(key_prefix, opts)
        await self._wait_fresh(int(rv or 0))
        # computeListLimit: a list at "0" is served whole, whatever its limit.
        return self._page_of_current(key_prefix, key_prefix, opts, 0 if rv == "0" else opts.limit)

    async def _list_consistent(self, key_prefix: str, start_key: str, opts: ListOptions) -> ListResult:
        """A list of the latest state: the cache once it has caught up with the storage's revision."""
        if not self.store.progress_requests_supported:
            # kube-apiserver's ShouldDelegateConsistentRead: the cache cannot learn that it is fresh.
            return await self.store.get_list(key_prefix, opts)
        try:
            await self._wait_fresh(await self.store.current_revision())
        except TooLargeResourceVersionError:  # the cache did not catch up in time: the storage answers
            return await self.store.get_list(key_prefix, opts)
        return self._page_of_current(key_prefix, start_key, opts, opts.limit)

    async def _list_exact(self, key_prefix: str, revision: int, start_key: str, opts: ListOptions) -> ListResult:
        """A list at one revision (Exact, a limited list at a resourceVersion, a continue token's): from the
        cache's snapshot of it while its event ring covers it and the storage has not compacted it."""
        await self._ready.wait()
        if revision > self.cache.resource_version:
            if not self.store.progress_requests_supported:
                return await self.store.get_list(key_prefix, opts)
            await self._wait_fresh(revision)
        compacted = await self.store.compacted_revision()
        # No await from here on: the snapshot is taken against the ring as it is now.
        snapshot = self.cache.snapshot_at(revision) if revision >= compacted else None
        if snapshot is None:
            return await self.store.get_list(key_prefix, opts)
        return list_page(snapshot, revision, key_prefix, start_key, opts, opts.limit)

    def _page_of_current(self, key_prefix: str, start_key: str, opts: ListOptions, limit: int) -> ListResult:
        revision, snapshot = self.cache.resource_version, self.cache.snapshot()
        result = list_page(snapshot, revision, key_prefix, start_key, opts, limit)
        if result.continue_token:
            self.cache.keep(revision, snapshot)  # the next pages are read at `revision`
        return result

    async def watch(self, key_prefix: str, resource_version: str, predicate: Predicate | None = None,
                    send_initial_events: bool | None = None, allow_bookmarks: bool = False) -> CacheWatcher:
        start = await self._consistent_revision(resource_version) if resource_version != "0" else 0
        initial = send_initial_events if send_initial_events is not None else resource_version in ("", "0")
        if start > self.cache.resource_version and not self.store.progress_requests_supported:
            return await self._watch_ahead_of_cache(key_prefix, start, predicate, initial,
                                                    bool(send_initial_events and allow_bookmarks))
        await self._wait_fresh(start)
        watcher = CacheWatcher(key_prefix, predicate, self.watchers.discard, self.progress, self.watcher_buffer)
        # No await from here on: the watcher starts exactly where the live events it is given begin.
        if initial:
            snapshot = self.cache.snapshot()
            first, end = snapshot.range(key_prefix)
            watcher.start_with_objects(snapshot.objects, first, end, self.cache.resource_version,
                                       mark_end=bool(send_initial_events and allow_bookmarks))
        else:
            watcher.start_with_events(self.cache.events_after(start),
                                      max(start, self.cache.resource_version))
        self.watchers.add(watcher)
        return watcher

    async def _watch_ahead_of_cache(self, key_prefix: str, start: int, predicate: Predicate | None,
                                    initial: bool, mark_end: bool) -> CacheWatcher:
        """A watch from a revision the cache has not reached, when it cannot ask to be told it has (etcd
        before 3.4.31): started at once, as kube-apiserver starts one, its initial state read from the
        store, and the cache's events up to where it starts skipped when they come."""
        await self._ready.wait()
        listed = await self.store.get_list(key_prefix, ListOptions()) if initial else None
        revision = max(start, int(listed.resource_version)) if listed is not None else start
        watcher = CacheWatcher(key_prefix, predicate, self.watchers.discard, self.progress, self.watcher_buffer)
        watcher.skip_events_through(revision)
        # No await from here on: the cache's events after `revision` so far, then the live ones.
        if listed is not None:
            watcher.start_with_objects(listed.items, 0, len(listed.items), revision, mark_end)
        else:
            watcher.start_with_events([], revision)
        if self.cache.resource_version > revision:
            for event in self.cache.events_after(revision):
                watcher.add(event)
        self.watchers.add(watcher)
        return watcher

    def progress(self) -> int:
        return self.cache.resource_version

    # ---- everything else goes to the store ----

    async def create(self, key: str, obj: Object, ttl: float = 0) -> Object:
        return await self.store.create(key, obj, ttl)

    async def get(self, key: str) -> Object:
        return await self.store.get(key)

    async def guaranteed_update(self, key: str, try_update: UpdateFunc, preconditions: Preconditions | None = None,
                                ignore_not_found: bool = False, ttl: TTLFunc | None = None) -> Object:
        # upstream's Cacher.GuaranteedUpdate: the cached object is where the update starts, not a read of storage
        suggestion = self.cache.objects.get(key) if self._ready.is_set() else None
        return await self.store.guaranteed_update(key, try_update, preconditions, ignore_not_found, ttl, suggestion)

    async def delete(self, key: str, preconditions: Preconditions | None = None,
                     validate_deletion: DeleteValidation | None = None) -> Object:
        return await self.store.delete(key, preconditions, validate_deletion)

    async def count(self, key_prefix: str) -> int:
        return await self.store.count(key_prefix)

    async def current_revision(self) -> int:
        return await self.store.current_revision()


__all__ = ["Cacher", "storage"]
