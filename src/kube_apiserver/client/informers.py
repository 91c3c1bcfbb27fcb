"""Informers (client-go's reflector, SharedIndexInformer and SharedInformerFactory), the one implementation
every reader of the server's own objects uses: a reflector lists (or, in watch-list mode, streams the
initial state as a watch with sendInitialEvents), then watches from there with bookmarks, re-watching from
the last resourceVersion when a stream ends and relisting with the reflector's backoff when the watch
cannot go on; it feeds an indexer with a namespace index and the registered handlers (a relist tells them
of the objects gone meanwhile). The factory shares one informer per resource on the loopback client among
admission plugins and the authorizer; controllers run their own, in watch-list mode. Readers look objects
up in memory: a lookup costs no request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..apimachinery import errors
from ..apimachinery.wait import cancel_and_wait
from .rest import Client, ResourceClient

log = logging.getLogger("kube_apiserver.client")
Object = dict[str, Any]
ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
SHORT_WATCH_SECONDS = 1.0  # a watch that ends this soon without an event is an error, as the reflector says
MIN_WATCH_TIMEOUT = 300  # the reflector's minWatchTimeout: each watch asks for 5 to 10 minutes
SYNC_TIMEOUT = 10.0  # admission's WaitForReady: how long a first lookup waits for the informer's list
INITIAL_EVENTS_END = (
    "k8s.io/initial-events-end"  # the bookmark annotation ending a watch-list's initial state
)
YIELD_EVERY = 100  # a relist's synthesized deletions let other tasks (a stop) run this often


class Backoff:
    """client-go's reflector backoff: 800ms doubling up to 30s, each with up to as much again of jitter,
    back to 800ms after two minutes without a failure; so a relist can never spin."""

    INITIAL, CAP, FACTOR, RESET_AFTER = 0.8, 30.0, 2.0, 120.0

    def __init__(self) -> None:
        self._delay = self.INITIAL
        self._last = float("-inf")

    def next(self) -> float:
        now = asyncio.get_running_loop().time()
        if now - self._last > self.RESET_AFTER:
            self._delay = self.INITIAL
        delay = self._delay * (1 + random.random())
        self._delay = min(self._delay * self.FACTOR, self.CAP)
        self._last = now + delay
        return delay


class WatchEndedError(Exception):
    """The watch cannot go on from where it was: the reflector lists again (after its backoff)."""


class WatchStream(Protocol):
    """A watch's events as {"type", "object"} dicts (watch.Interface)."""

    def __aiter__(self) -> AsyncIterator[Object]: ...

    async def stop(self) -> None: ...


class ListerWatcher(Protocol):
    """What a reflector reads: the loopback client's ResourceClient, or a registry storage's adapter.
    `resource` names it in logs."""

    resource: str

    async def list(self, **params: Any) -> Object: ...

    async def watch(self, **params: Any) -> WatchStream: ...


def object_key(obj: Object) -> str:
    """MetaNamespaceKeyFunc: namespace/name, or name for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


class Indexer:
    """cache.Indexer with the namespace index: the objects as last seen, by key and by namespace."""

    def __init__(self) -> None:
        self.items: dict[str, Object] = {}
        self._by_namespace: dict[str, set[str]] = {}

    def get(self, key: str) -> Object | None:
        return self.items.get(key)

    def get_by_name(self, namespace: str, name: str) -> Object | None:
        return self.items.get(f"{namespace}/{name}" if namespace else name)

    def list(self, namespace: str | None = None) -> list[Object]:
        """Every object, or those of one namespace ("" for the cluster-scoped)."""
        if namespace is None:
            return list(self.items.values())
        keys = self._by_namespace.get(namespace) or ()
        return [self.items[key] for key in keys]

    def upsert(self, obj: Object) -> Object | None:
        """Stores `obj`; returns what it replaced."""
        key = object_key(obj)
        old = self.items.get(key)
        self.items[key] = obj
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        self._by_namespace.setdefault(namespace, set()).add(key)
        return old

    def delete(self, obj: Object) -> Object | None:
        key = object_key(obj)
        old = self.items.pop(key, None)
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        keys = self._by_namespace.get(namespace)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_namespace[namespace]
        return old


OnAdd = Callable[[Object], Awaitable[None] | None]
OnUpdate = Callable[[Object, Object], Awaitable[None] | None]
OnDelete = Callable[[Object], Awaitable[None] | None]


@dataclass
class EventHandler:
    """ResourceEventHandlerFuncs: each may be a plain function or a coroutine function."""

    on_add: OnAdd | None = None
    on_update: OnUpdate | None = None
    on_delete: OnDelete | None = None


async def _call(func: Callable[..., Any] | None, *args: Any) -> None:
    if func is None:
        return
    try:
        result = func(*args)
        if asyncio.iscoroutine(result):
            await result
    except Exception:  # noqa: BLE001 - one handler's failure must not stop the informer
        log.exception("informer event handler failed")


class SharedIndexInformer:
    """One resource's reflector, indexer and handlers. `watch_list`: the reflector streams the initial
    state (a watch with sendInitialEvents, ended by a bookmark) instead of listing it."""

    def __init__(self, resource: ListerWatcher, resync_period: float = 0.0, watch_list: bool = False):
        self.resource = resource
        self.resync_period = resync_period
        self.watch_list = watch_list
        self.indexer = Indexer()
        self.handlers: list[EventHandler] = []
        self.synced = asyncio.Event()  # the indexer holds a complete list
        self.lists = 0  # how many times the whole state was asked for: a relist loop shows here
        self.last_sync_resource_version = ""
        self.version = 0  # counts the indexer's changes: a reader re-derives what it built only when it moved
        self._backoff = Backoff()
        self._task: asyncio.Task[None] | None = None
        self._resync: asyncio.Task[None] | None = None
        self.stopped = False
        self._replays: set[asyncio.Task[None]] = set()

    @property
    def started(self) -> bool:
        return self._task is not None

    def add_event_handler(self, handler: EventHandler) -> None:
        """A handler added to a synced informer hears of every object it holds first (as client-go)."""
        self.handlers.append(handler)
        if self.synced.is_set():
            for obj in list(self.indexer.items.values()):
                task = asyncio.get_running_loop().create_task(_call(handler.on_add, obj))
                self._replays.add(task)
                task.add_done_callback(self._replays.discard)

    def start(self) -> None:
        if self._task is not None or self.stopped:
            return
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._run())
        if self.resync_period > 0:
            self._resync = loop.create_task(self._resync_loop())

    async def wait_for_sync(self, timeout: float = SYNC_TIMEOUT) -> bool:
        """Starts the informer if it was not, then waits (up to `timeout`) for its first list."""
        self.start()
        if not self.synced.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):  # not wait_for: it can swallow the caller's cancellation
                    await self.synced.wait()
        return self.synced.is_set()

    async def stop(self) -> None:
        self.stopped = True
        await cancel_and_wait(self._task, self._resync)

    async def _run(self) -> None:
        while True:
            try:
                await self._list_and_watch()
            except asyncio.CancelledError:
                raise
            except (WatchEndedError, errors.StatusError) as err:
                log.info("watch of %s ended: %s; relisting", self.resource.resource, err)
            except Exception:  # noqa: BLE001 - keep watching; the next pass relists
                log.exception("informer for %s failed", self.resource.resource)
            await asyncio.sleep(self._backoff.next())

    async def _list_and_watch(self) -> None:
        self.lists += 1
        resource_version = await self._watch("", initial=True) if self.watch_list else await self._list()
        while True:
            resource_version = await self._watch(resource_version)

    def _not_served(self, err: errors.StatusError) -> None:
        if err.code == 404 and not self.synced.is_set():
            self.synced.set()  # not served (a disabled group, a CRD not yet established): nothing to list

    async def _list(self) -> str:
        """The reflector's first list (resourceVersion=0: from the watch cache), replacing the indexer."""
        try:
            listed = await self.resource.list(resource_version="0")
        except errors.StatusError as err:
            self._not_served(err)
            raise
        items = listed.get("items") or []
        kind = str(listed.get("kind") or "").removesuffix("List")
        api_version = listed.get("apiVersion")
        fresh: dict[str, Object] = {}
        for item in items:  # list items carry no kind; the watch's objects do
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", api_version)
            fresh[object_key(item)] = item
        await self._forget_all_but(fresh.keys())
        for item in fresh.values():
            old = self.indexer.upsert(item)
            await self._notify(ADDED if old is None else MODIFIED, item, old)
        resource_version = (listed.get("metadata") or {}).get("resourceVersion") or ""
        self.last_sync_resource_version = resource_version
        self.version += 1
        self.synced.set()
        return resource_version

    async def _forget_all_but(self, keys: Any) -> None:
        """A relist: the objects the new state does not hold are gone (their handlers hear of it)."""
        gone = [old for key, old in self.indexer.items.items() if key not in keys]
        for count, old in enumerate(gone, 1):
            self.indexer.delete(old)
            await self._notify(DELETED, old, None)
            if count % YIELD_EVERY == 0:
                await asyncio.sleep(0)

    async def _open(self, resource_version: str, initial: bool) -> WatchStream:
        timeout = int(MIN_WATCH_TIMEOUT * (1 + random.random()))
        params: dict[str, Any] = {"allow_watch_bookmarks": True, "timeout_seconds": timeout}
        if initial:  # the current state first, from the watch cache ("0"), then what follows it
            params.update(
                resource_version="0", send_initial_events=True, resource_version_match="NotOlderThan"
            )
        else:
            params["resource_version"] = resource_version
        try:
            return await self.resource.watch(**params)
        except errors.StatusError as err:
            if initial:
                self._not_served(err)
            raise WatchEndedError(f"status {err.code}: {err.message}") from None

    async def _watch(self, resource_version: str, initial: bool = False) -> str:
        """Watches from `resource_version` until the stream ends; returns where to resume. `initial`: a
        watch-list, whose objects up to the initial-events-end bookmark are the whole current state."""
        loop = asyncio.get_running_loop()
        started, received = loop.time(), 0
        listed: set[str] | None = set() if initial else None  # the keys of the initial state so far
        watch = await self._open(resource_version, initial)
        try:
            async for event in watch:
                received += 1
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == ERROR:
                    raise WatchEndedError(f"status {obj.get('code')}: {obj.get('message')}")
                if kind == BOOKMARK and listed is not None and _ends_initial_events(obj):
                    await self._forget_all_but(listed)
                    listed = None
                    self.synced.set()
                if listed is not None:  # the initial objects come in key order, not resourceVersion order
                    if kind != BOOKMARK:
                        listed.add(object_key(obj))
                        await self._apply(kind, obj)
                    continue
                resource_version = (obj.get("metadata") or {}).get("resourceVersion") or resource_version
                self.last_sync_resource_version = resource_version
                if kind != BOOKMARK:
                    await self._apply(kind, obj)
        finally:
            await watch.stop()
        if listed is not None:
            raise WatchEndedError("the stream ended before the end of its initial events")
        if not received and loop.time() - started < SHORT_WATCH_SECONDS:
            raise WatchEndedError("very short watch")
        return resource_version

    async def _apply(self, kind: str | None, obj: Object) -> None:
        self.version += 1
        if kind == DELETED:
            old = self.indexer.delete(obj)
            await self._notify(DELETED, old or obj, None)
        elif kind in (ADDED, MODIFIED):
            old = self.indexer.upsert(obj)
            await self._notify(ADDED if old is None else MODIFIED, obj, old)

    async def _notify(self, kind: str, obj: Object, old: Object | None) -> None:
        for handler in self.handlers:
            if kind == ADDED:
                await _call(handler.on_add, obj)
            elif kind == MODIFIED:
                await _call(handler.on_update, old, obj)
            else:
                await _call(handler.on_delete, obj)

    async def _resync_loop(self) -> None:
        """Every resync period, each handler hears an update of every object to itself (level triggering)."""
        while True:
            await asyncio.sleep(self.resync_period)
            if self.synced.is_set():
                for obj in list(self.indexer.items.values()):
                    await self._notify(MODIFIED, obj, obj)


def _ends_initial_events(bookmark: Object) -> bool:
    annotations = (bookmark.get("metadata") or {}).get("annotations") or {}
    return annotations.get(INITIAL_EVENTS_END) == "true"


class SharedInformerFactory:
    """One informer per resource, shared by every reader of this server's loopback client."""

    def __init__(self, client: Client, default_resync: float = 0.0):
        self.client = client
        self.default_resync = default_resync
        self.informers: dict[tuple[str, str, str], SharedIndexInformer] = {}
        self._started = False
        self._stopped = False
        # the informers asked for before the factory started (the server's own readers'): the
        # informer-sync readiness check waits for them; those started later (lazily) do not hold it back
        self.initial: list[SharedIndexInformer] = []

    def for_resource(self, group: str, version: str, resource: str) -> SharedIndexInformer:
        """The resource's informer (made once); started at once when the factory has been started."""
        key = (group, version, resource)
        informer = self.informers.get(key)
        if informer is None:
            informer = self.informers[key] = SharedIndexInformer(
                self.client.resource(group, version, resource), self.default_resync
            )
            if self._stopped:
                informer.stopped = True
            elif self._started:
                informer.start()
        return informer

    def start(self) -> None:
        """Starts the informers asked for so far, and from now on each as it is asked for."""
        if not self._started:
            self.initial = list(self.informers.values())
        self._started = True
        for informer in self.informers.values():
            informer.start()

    def unsynced(self) -> list[str]:
        """The informers of `initial` that have not listed yet (the informer-sync readiness check's)."""
        return [_describe(informer.resource) for informer in self.initial if not informer.synced.is_set()]

    async def wait_for_cache_sync(self, timeout: float = SYNC_TIMEOUT) -> dict[tuple[str, str, str], bool]:
        results = await asyncio.gather(
            *(i.wait_for_sync(timeout) for i in self.informers.values() if i.started)
        )
        started = [key for key, informer in self.informers.items() if informer.started]
        return dict(zip(started, results, strict=True))

    async def stop(self) -> None:
        self._stopped = True
        for informer in list(self.informers.values()):
            await informer.stop()


def _describe(resource: ResourceClient) -> str:
    return (
        f"{resource.resource}.{resource.version}.{resource.group}"
        if resource.group
        else (f"{resource.resource}.{resource.version}")
    )


class Lister:
    """A resource's lister: reads from its informer's indexer, starting the informer on first use and
    waiting for its first list (admission's lazy informers: none is listed before it is needed)."""

    def __init__(self, informer: SharedIndexInformer):
        self.informer = informer

    async def ready(self) -> bool:
        if self.informer.synced.is_set():
            return True
        if self.informer.stopped:
            return False
        return await self.informer.wait_for_sync()

    async def list(self, namespace: str | None = None) -> list[Object]:
        """The cached objects (shared: callers copy before changing them); None: every namespace."""
        await self.ready()
        return self.informer.indexer.list(namespace)

    async def get(self, name: str, namespace: str = "") -> Object | None:
        await self.ready()
        return self.informer.indexer.get_by_name(namespace, name)
