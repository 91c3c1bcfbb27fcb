"""Informers: a list-and-watch loop per resource that keeps going (re-watching from the last
resourceVersion, relisting after an error with the reflector's backoff) and hands every change to a
handler."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from ..client.informers import Backoff
from ..client.rest import Client, ResourceClient, Watch
from ..registry.context import Context, UserInfo
from ..registry.options import ListQuery
from ..storage.interface import BOOKMARK, ERROR, INITIAL_EVENTS_END

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


class WatchEndedError(Exception):
    """The watch cannot go on from where it was: the informer lists again (after its backoff)."""


SHORT_WATCH_SECONDS = 1.0  # a watch that ends this soon without an event is an error, as the reflector says


class Informer:
    """A watch-list (sendInitialEvents, k8s' streaming list) then its live events, re-watched from the
    last resourceVersion when the stream ends; relisted, after the backoff, when it cannot be resumed."""

    def __init__(self, resource: Resource, handler: Handler):
        self.resource = resource
        self.handler = handler
        self.synced = asyncio.Event()  # the handler has seen every object of the first list
        self.lists = 0  # how many times the whole state was asked for: a relist loop shows here
        self._backoff = Backoff()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                await self._list_and_watch()
            except asyncio.CancelledError:
                raise
            except WatchEndedError as err:
                log.info("watch of %s ended: %s; relisting", self.resource.resource, err)
            except Exception:  # noqa: BLE001 - keep watching; the next pass relists
                log.exception("informer for %s failed", self.resource.resource)
            await asyncio.sleep(self._backoff.next())

    async def _list_and_watch(self) -> None:
        self.lists += 1
        resource_version = await self._watch("")
        while True:
            resource_version = await self._watch(resource_version)

    async def _watch(self, resource_version: str) -> str:
        """Watches from `resource_version` ("": the current state first) until the stream ends; returns
        where to resume from. Raises WatchEndedError when the informer must list again."""
        listing = not resource_version
        query = ListQuery(resource_version=resource_version or "0", allow_watch_bookmarks=True,
                          timeout_seconds=300)
        if listing:
            query.send_initial_events, query.resource_version_match = True, "NotOlderThan"
        loop = asyncio.get_running_loop()
        started, received = loop.time(), 0
        watcher = await self._open(query)
        try:
            async for event in watcher:
                received += 1
                if event.type == ERROR:
                    code = event.object.get("code") if isinstance(event.object, dict) else None
                    raise WatchEndedError(f"status {code}")
                if event.type == BOOKMARK:
                    if listing and _ends_initial_events(event.object):
                        listing = False
                        self.synced.set()
                    if not listing:
                        resource_version = event.object["metadata"]["resourceVersion"]
                    continue
                if not listing:  # the initial objects come in key order, not resourceVersion order
                    resource_version = event.object["metadata"]["resourceVersion"]
                await self._handle(event.type, event.object)
        finally:
            await watcher.stop()
        if listing:
            raise WatchEndedError("the stream ended before the end of its initial events")
        if not received and loop.time() - started < SHORT_WATCH_SECONDS:
            raise WatchEndedError("very short watch")
        return resource_version

    async def _open(self, query: ListQuery) -> Any:
        """The watch through the loopback client (authenticated, authorized and audited as any watch), or
        on the registry storage for a resource that has no client."""
        if self.resource.client is None:
            return await self.resource.store.watch(self.resource.context(), query)
        try:
            watch = await self.resource.api().watch(
                resource_version=query.resource_version, allow_watch_bookmarks=True,
                timeout_seconds=query.timeout_seconds, send_initial_events=query.send_initial_events or None,
                resource_version_match=query.resource_version_match or None)
        except errors.StatusError as err:
            raise WatchEndedError(f"status {err.code}: {err.message}") from None
        return ClientWatcher(watch)

    async def _handle(self, event_type: str, obj: Object) -> None:
        try:
            await self.handler(self.resource, event_type, obj)
        except errors.StatusError as err:
            log.info("%s %s: %s", self.resource.resource, obj["metadata"].get("name"), err.message)


@dataclass(frozen=True)
class ClientEvent:
    type: str
    object: Object


class ClientWatcher:
    """A loopback client's watch as the storage's watchers are read: events with .type and .object."""

    def __init__(self, watch: Watch):
        self.watch = watch

    async def __aiter__(self) -> AsyncIterator[ClientEvent]:
        async for event in self.watch:
            yield ClientEvent(str(event.get("type") or ""), event.get("object") or {})

    async def stop(self) -> None:
        await self.watch.stop()


def _ends_initial_events(bookmark: Object) -> bool:
    annotations = (bookmark.get("metadata") or {}).get("annotations") or {}
    return annotations.get(INITIAL_EVENTS_END) == "true"


RETRY_SECONDS = 1.0


async def active_namespace(namespaces: Resource, name: str) -> Object | None:
    """The namespace, when it exists and is Active (not being deleted): where controllers may create."""
    try:
        ns = await namespaces.store.get(namespaces.context(), name)
    except errors.StatusError as err:
        if err.code == 404:
            return None
        raise
    if (ns.get("status") or {}).get("phase") != "Active" or ns["metadata"].get("deletionTimestamp"):
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
        self._worker = asyncio.get_running_loop().create_task(self._work())

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
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
