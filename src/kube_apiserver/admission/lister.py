"""The objects of a resource as admission plugins read them (their informer listers): from the server's
shared informer on the loopback client (started on first use), and read live through the loopback client
when the informer shows none yet (the plugins' live lookup). The LimitRanger and ResourceQuota plugins keep
what a live lookup answered for 30 s (their live-lookup LRU), so that writes in a namespace without limit
ranges or quotas, the usual case, do not each list them through the loopback client."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ..apimachinery import errors
from ..apimachinery.patch import copy_json
from ..client.informers import Lister, SharedIndexInformer, SharedInformerFactory
from ..client.rest import ResourceClient

Object = dict[str, Any]
LIVE_LIMIT = 10_000
LIVE_TTL = 30.0  # seconds a live lookup answers for its namespace (the plugins' liveTTL)


class ObjectLookup:
    """One object by namespace and name as upstream's plugins read it: from the resource's shared informer
    (started by the first lookup), and live from storage when the informer does not hold it (created a moment
    ago, or the informer has not listed yet). The object is the informer's own: callers only read it."""

    def __init__(self, live: Callable[[str, str], Awaitable[Object | None]], resource: str, group: str = "",
                 version: str = "v1"):
        self.live = live
        self.group, self.version, self.resource = group, version, resource
        self.informer: SharedIndexInformer | None = None

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.informer = informers.for_resource(self.group, self.version, self.resource)

    def cached(self, namespace: str, name: str) -> Object | None:
        if self.informer is None or not name:
            return None
        self.informer.start()
        return self.informer.indexer.get_by_name(namespace, name)

    async def get(self, namespace: str, name: str) -> Object | None:
        return self.cached(namespace, name) or await self.live(namespace, name)


class LiveLookups:
    """Upstream's live-lookup LRU: the last live list of each of up to `size` namespaces, answering for `ttl`
    seconds; concurrent lookups of one namespace share one list (upstream's singleflight)."""

    def __init__(self, size: int, ttl: float = LIVE_TTL):
        self.size, self.ttl = size, ttl
        # namespace -> (expiry on the loop's clock, the objects listed live)
        self.entries: OrderedDict[str, tuple[float, list[Object]]] = OrderedDict()
        self.in_flight: dict[str, asyncio.Future[list[Object]]] = {}

    async def get(self, namespace: str, lookup: Any) -> list[Object]:
        """The namespace's objects (not copies) from the LRU while fresh, else from `lookup(namespace)`."""
        now = asyncio.get_running_loop().time()
        entry = self.entries.get(namespace)
        if entry is not None and entry[0] > now:
            return entry[1]
        pending = self.in_flight.get(namespace)
        if pending is None:
            pending = self.in_flight[namespace] = asyncio.ensure_future(lookup(namespace))
            pending.add_done_callback(lambda _: self.in_flight.pop(namespace, None))
        items = await asyncio.shield(pending)
        self.entries[namespace] = (now + self.ttl, items)
        self.entries.move_to_end(namespace)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return items

    def known_empty(self, namespace: str) -> bool:
        """Whether the namespace's last live lookup, still fresh, found nothing."""
        entry = self.entries.get(namespace)
        return entry is not None and not entry[1] and entry[0] > asyncio.get_running_loop().time()

    def clear(self) -> None:
        self.entries.clear()


class NamespacedLister:
    """A resource's objects by namespace ("" for a cluster-scoped resource). Without an informer factory
    (a server without a loopback client) it knows no objects. `live_cache_size`: the namespaces whose live
    lookups are kept LIVE_TTL seconds (0: every read the informer answers with nothing is a live list)."""

    def __init__(
        self,
        informers: SharedInformerFactory | None,
        resource: str,
        group: str = "",
        version: str = "v1",
        live_cache_size: int = 0,
    ):
        self.group, self.resource, self.version = group, resource, version
        self.informers = informers
        self.live_lookups = LiveLookups(live_cache_size) if live_cache_size > 0 else None

    @property
    def client(self) -> ResourceClient | None:
        return (
            None
            if self.informers is None
            else self.informers.client.resource(self.group, self.version, self.resource)
        )

    async def list(self, namespace: str, live: bool = False, shared: bool = False) -> list[Object]:
        """Copies of the objects in `namespace` (callers may change them). `live`: read from the storage
        whatever the informer and the live-lookup LRU hold. `shared`: the cached objects themselves, for a
        caller that only reads them (a pod create's Priority reads the classes' names and values)."""
        if self.informers is None:
            return []
        items: list[Object] = []
        if not live:
            items = await Lister(self.informers.for_resource(self.group, self.version, self.resource)).list(
                namespace
            )
        if not items:  # a paged read is served by the store itself, at its latest revision
            if live or self.live_lookups is None:
                items = await self._live(namespace)
            else:
                items = await self.live_lookups.get(namespace, self._live)
        if shared:
            return items
        return copy_json(items)  # decoded JSON: a plain tree copy, several times cheaper than deepcopy

    def known_empty(self, namespace: str) -> bool:
        """Whether list(namespace) would answer [] right away: the informer has listed and holds nothing in
        the namespace, and a live lookup of it, still fresh, found nothing either."""
        if self.informers is None:
            return True
        if self.live_lookups is None or not self.live_lookups.known_empty(namespace):
            return False
        informer = self.informers.informers.get((self.group, self.version, self.resource))
        return informer is not None and informer.synced.is_set() and not informer.indexer.list(namespace)

    async def _live(self, namespace: str) -> list[Object]:
        client = self.client
        assert client is not None
        try:
            listed = await client.namespace(namespace).list(limit=LIVE_LIMIT)
        except errors.StatusError as err:
            if err.code == 404:  # the resource is not served (its group is disabled)
                return []
            raise
        kind, api_version = str(listed.get("kind") or "").removesuffix("List"), listed.get("apiVersion")
        items = listed.get("items") or []
        for item in items:
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", api_version)
        return items
