"""The controllers' informers (the client's reflector and indexer, see client/informers.py) and the
informer-driven controller with its work queue."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from ..apimachinery.wait import cancel_and_wait
from ..client.informers import (
    ADDED,
    DELETED,
    MODIFIED,
    Backoff,  # noqa: F401 - re-exported: the controllers and their tests know it from here
    EventHandler,
    Indexer,
    SharedIndexInformer,
    WatchStream,
)
from ..client.rest import Client, ResourceClient
from ..registry.context import Context, UserInfo
from ..registry.options import ListQuery

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
Handler = Callable[["Resource", str, Object], Awaitable[None]]
CONTROLLER_USER = UserInfo("system:kube-controller-manager", groups=("system:masters",))


@dataclass(frozen=True)
class Resource:
    """A served resource: its registry storage (what its informers read) and the loopback client its
    controllers write through."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    store: Any
    client: Client | None = field(default=None, compare=False)

    def api(self, namespace: str = "") -> ResourceClient:
        """The resource through the loopback client (in `namespace` when it is namespaced)."""
        assert self.client is not None, "controllers write through the server's loopback client"
        api = self.client.resource(self.group, self.version, self.resource)
        return api.namespace(namespace) if self.namespaced else api

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def context(self, namespace: str = "") -> Context:
        return Context(namespace if self.namespaced else "", CONTROLLER_USER)


class Informer:
    """A controller's informer: client/informers.py's reflector and indexer in watch-list mode (the
    current state streamed as a watch with sendInitialEvents, then its live events; re-watched from the
    last resourceVersion, relisted after the backoff), each change handed to `handler(resource, type,
    object)`; a relist hands over the objects gone meanwhile as DELETED."""

    def __init__(self, resource: Resource, handler: Handler):
        self.resource = resource
        self.handler = handler
        self.informer = SharedIndexInformer(ResourceListerWatcher(resource), watch_list=True)
        self.informer.add_event_handler(EventHandler(
            on_add=lambda obj: self._handle(ADDED, obj),
            on_update=lambda _old, new: self._handle(MODIFIED, new),
            on_delete=lambda obj: self._handle(DELETED, obj)))

    @property
    def synced(self) -> asyncio.Event:
        """Set once the handler has seen every object of the first list."""
        return self.informer.synced

    @property
    def lists(self) -> int:
        """How many times the whole state was asked for: a relist loop shows here."""
        return self.informer.lists

    @property
    def indexer(self) -> Indexer:
        """The objects as last seen (the controller's lister)."""
        return self.informer.indexer

    def get(self, name: str, namespace: str = "") -> Object | None:
        """The lister's Get: the object as last seen (shared: callers copy before changing it)."""
        return self.informer.indexer.get_by_name(namespace, name)

    def start(self) -> None:
        self.informer.start()

    async def stop(self) -> None:
        await self.informer.stop()

    async def _handle(self, event_type: str, obj: Object) -> None:
        try:
            await self.handler(self.resource, event_type, obj)
        except errors.StatusError as err:
            log.info("%s %s: %s", self.resource.resource, obj["metadata"].get("name"), err.message)


class ResourceListerWatcher:
    """What a controller's reflector reads: the resource through the loopback client (authenticated,
    authorized and audited as any watch), or, for a resource without a client, its registry storage,
    whose watch's events are handed on as the client's {"type", "object"} dicts."""

    def __init__(self, resource: Resource):
        self.source = resource
        self.resource = resource.resource if resource is not None else ""

    async def list(self, **params: Any) -> Object:
        raise NotImplementedError("controllers' informers stream their lists (watch-list)")

    async def watch(self, **params: Any) -> WatchStream:
        if self.source.client is not None:
            return await self.source.api().watch(**params)
        query = ListQuery(resource_version=params.get("resource_version") or "",
                          allow_watch_bookmarks=bool(params.get("allow_watch_bookmarks")),
                          timeout_seconds=params.get("timeout_seconds"))
        if params.get("send_initial_events"):
            query.send_initial_events = True
            query.resource_version_match = params.get("resource_version_match") or ""
        return StoreWatch(await self.source.store.watch(self.source.context(), query))


class StoreWatch:
    def __init__(self, watcher: Any):
        self.watcher = watcher

    async def __aiter__(self) -> AsyncIterator[Object]:
        async for event in self.watcher:
            yield {"type": event.type, "object": event.object}

    async def stop(self) -> None:
        await self.watcher.stop()


RETRY_SECONDS = 1.0


def active_namespace(namespaces: Informer, name: str) -> Object | None:
    """The namespace, from the namespace lister, when it exists and is Active (not being deleted): where
    controllers may create."""
    ns = namespaces.get(name)
    if ns is None or (ns.get("status") or {}).get("phase") != "Active" or ns["metadata"].get("deletionTimestamp"):
        return None
    return ns


class InformerController:
    """A controller made of informers feeding a queue of keys, and one worker draining it: each key is
    synced, and synced again a moment later when that fails or says it is not done yet (subclasses:
    `sync`, or their own `_work`)."""

    name = "controller"
    informers: list[Informer]
    queue: asyncio.Queue[Any]
    _worker: asyncio.Task[None] | None = None

    async def start(self) -> None:
        for informer in self.informers:
            informer.start()
        self._worker = asyncio.get_running_loop().create_task(self._work_once_synced())

    async def _work_once_synced(self) -> None:
        """WaitForNamedCacheSync: the worker starts once every informer has its first list, so what the
        listers say is the state, not the part of it seen so far."""
        await asyncio.gather(*(informer.synced.wait() for informer in self.informers))
        await self._work()

    async def stop(self) -> None:
        await cancel_and_wait(self._worker)
        for informer in self.informers:
            await informer.stop()

    async def sync(self, key: Any) -> bool | None:
        """Brings one key in line; False (or an error) retries it shortly."""
        raise NotImplementedError

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                done = await self.sync(key)
            except Exception as err:  # noqa: BLE001 - retried shortly
                log.info("%s controller: %s: %s", self.name, key, err)
                done = False
            if done is False:
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self.queue.put_nowait, key)
