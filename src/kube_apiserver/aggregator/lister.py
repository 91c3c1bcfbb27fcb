"""The APIService informer and lister the aggregator's controllers share: every APIService in memory,
kept current by a watch, relisted every resync period (client-go's resync, which is also when the
availability of remote APIServices is checked again)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..apimachinery.meta import parse_resource_version
from ..apimachinery.wait import Periodic
from ..controllers.informer import Informer, Resource
from ..registry.options import ListQuery
from ..registry.store import Store
from ..storage.interface import DELETED
from .apiservice import INFO

log = logging.getLogger("kube_apiserver.aggregator")
Object = dict[str, Any]
RESYNC = "RESYNC"
# (event type: ADDED, MODIFIED, DELETED or RESYNC; the APIService)
EventHandler = Callable[[str, Object], None]
RESYNC_SECONDS = 30.0


def _name(obj: Object) -> str:
    return obj["metadata"]["name"]


def _revision(obj: Object) -> int:
    return parse_resource_version(obj["metadata"].get("resourceVersion"))


class APIServiceLister:
    def __init__(self, store: Store, resync_seconds: float | None = None):
        self.store = store
        self.items: dict[str, Object] = {}
        self.handlers: list[EventHandler] = []
        resource = Resource(INFO.group, INFO.version, INFO.resource, INFO.kind, False, store)
        self._informer = Informer(resource, self._on_watch_event)
        self._resync = Periodic("APIService resync", RESYNC_SECONDS if resync_seconds is None else resync_seconds,
                                self.resync)
        self._starting: asyncio.Future[None] | None = None

    def add_handler(self, handler: EventHandler) -> None:
        self.handlers.append(handler)

    def get(self, name: str) -> Object | None:
        return self.items.get(name)

    def list(self) -> list[Object]:
        return list(self.items.values())

    async def start(self) -> None:
        """Lists first (the cache is synced when this returns), then watches. Every controller starting
        it waits for the one start."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        await self._starting

    async def _start(self) -> None:
        await self.relist()
        self._informer.start()
        self._resync.start()

    async def stop(self) -> None:
        await self._resync.stop()
        await self._informer.stop()

    async def relist(self) -> None:
        listed = (await self.store.list(self._informer.resource.context(), ListQuery()))["items"]
        names = {_name(o) for o in listed}
        for gone in set(self.items) - names:
            self._notify(DELETED, self.items.pop(gone))
        for obj in listed:
            self._apply("ADDED", obj)

    async def resync(self) -> None:
        await self.relist()
        for obj in list(self.items.values()):
            self._notify(RESYNC, obj)

    async def _on_watch_event(self, resource: Resource, event_type: str, obj: Object) -> None:
        if event_type == DELETED:
            current = self.items.get(_name(obj))
            if current is not None and _revision(current) <= _revision(obj):
                self._notify(DELETED, self.items.pop(_name(obj)))
            return
        self._apply(event_type, obj)

    def _apply(self, event_type: str, obj: Object) -> None:
        """Keeps the newest revision seen: the watch may replay what a relist already brought."""
        current = self.items.get(_name(obj))
        if current is not None and _revision(current) >= _revision(obj):
            return
        self.items[_name(obj)] = obj
        self._notify("ADDED" if current is None else "MODIFIED", obj)

    def _notify(self, event_type: str, obj: Object) -> None:
        for handler in self.handlers:
            try:
                handler(event_type, obj)
            except Exception:  # noqa: BLE001 - one handler's failure does not starve the others
                log.exception("APIService handler failed for %s", _name(obj))
