"""Discovery through the loopback client, and the REST mapper built from it (client-go's discovery client
and restmapper.DeferredDiscoveryRESTMapper): which resource serves a kind, which kind a resource (or a
subresource) is, and whether it is namespaced. The mapping is read from aggregated discovery (two
requests: /api and /apis) and read again when a lookup misses (a CRD or APIService added since), at most
once per MIN_REFRESH_SECONDS, and when `reset()` says the served resources changed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..apimachinery import deepjson, errors
from .informers import EventHandler, SharedInformerFactory
from .rest import LoopbackTransport, status_error

Object = dict[str, Any]
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
# a miss reads discovery again at most this often (the mapper is asked per admission request)
MIN_REFRESH_SECONDS = 1.0
# what changes the served resources: a change to any of these makes the mapper read discovery again
SERVED_RESOURCE_SOURCES = (
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    ("apiregistration.k8s.io", "v1", "apiservices"),
)


@dataclass(frozen=True)
class GroupVersionResource:
    group: str
    version: str
    resource: str


@dataclass(frozen=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str


@dataclass(frozen=True)
class RESTMapping:
    """meta.RESTMapping: the resource that serves a kind (or the kind a resource is), and its scope."""

    resource: GroupVersionResource
    kind: GroupVersionKind
    namespaced: bool


class NoMatchError(Exception):
    """meta.NoKindMatchError / NoResourceMatchError."""


class DiscoveryClient:
    """GETs of discovery documents through the loopback transport."""

    def __init__(self, transport: LoopbackTransport):
        self.transport = transport

    async def _get(self, path: str, accept: str = "application/json") -> Object:
        resp = await self.transport.round_trip("GET", path, accept=accept)
        if resp.status >= 400:
            raise status_error(resp)
        return deepjson.loads(resp.body) if resp.body else {}

    async def resources_for(self, group_version: str) -> Object:
        """The APIResourceList of a group version; a 404 StatusError when it is not served."""
        path = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        return await self._get(path)

    async def aggregated(self) -> list[Object]:
        """Every APIGroupDiscovery (the core group first), as aggregated discovery serves them."""
        groups: list[Object] = []
        for path in ("/api", "/apis"):
            document = await self._get(path, AGGREGATED)
            if document.get("kind") != "APIGroupDiscoveryList":
                raise errors.internal_error(f"{path} did not answer with aggregated discovery")
            groups.extend(item for item in document.get("items") or [] if isinstance(item, dict))
        return groups


def _gvk(response_kind: Any, group: str, version: str) -> GroupVersionKind | None:
    if not isinstance(response_kind, dict) or not response_kind.get("kind"):
        return None
    return GroupVersionKind(
        str(response_kind.get("group", group) or ""),
        str(response_kind.get("version", version) or version),
        str(response_kind["kind"]),
    )


class Mappings:
    """One reading of discovery, indexed both ways."""

    def __init__(self, groups: list[Object]):
        self.by_resource: dict[tuple[GroupVersionResource, str], RESTMapping] = {}
        self.by_kind: dict[GroupVersionKind, RESTMapping] = {}
        for group in groups:
            name = str((group.get("metadata") or {}).get("name") or "")
            for version in group.get("versions") or []:
                for resource in version.get("resources") or []:
                    self._add(name, str(version.get("version") or ""), resource)

    def _add(self, group: str, version: str, resource: Object) -> None:
        gvr = GroupVersionResource(group, version, str(resource.get("resource") or ""))
        namespaced = resource.get("scope") == "Namespaced"
        kind = _gvk(resource.get("responseKind"), group, version)
        if kind is not None:
            mapping = RESTMapping(gvr, kind, namespaced)
            self.by_resource[(gvr, "")] = mapping
            # the first resource of a kind is its resource, as the discovery mapper prefers it
            self.by_kind.setdefault(GroupVersionKind(group, version, kind.kind), mapping)
        for sub in resource.get("subresources") or []:
            sub_kind = _gvk(sub.get("responseKind"), group, version)
            if sub_kind is not None:
                self.by_resource[(gvr, str(sub.get("subresource") or ""))] = RESTMapping(
                    gvr, sub_kind, namespaced
                )


class RESTMapper:
    """The discovery REST mapper: read on first use, re-read when a lookup misses (rate limited) or after
    reset()."""

    def __init__(self, discovery: DiscoveryClient, min_refresh: float = MIN_REFRESH_SECONDS):
        self.discovery = discovery
        self.min_refresh = min_refresh
        self._mappings: Mappings | None = None
        self._read_at = float("-inf")
        self._stale = False
        self._reading: asyncio.Future[Mappings] | None = None
        self.reads = 0  # how many times discovery was read
        self._follow: SharedInformerFactory | None = None

    def reset(self) -> None:
        """The served resources changed (a CRD or APIService): the next lookup reads discovery again."""
        self._stale = True

    def follow(self, informers: SharedInformerFactory) -> None:
        """Resets the mapper whenever a CRD or an APIService changes, watched from its first lookup on
        (a server whose admission maps no kind starts no informer for it)."""
        self._follow = informers

    def _subscribe(self) -> None:
        informers, self._follow = self._follow, None
        if informers is None:
            return
        handler = EventHandler(
            on_add=lambda _obj: self.reset(),
            on_update=lambda _old, _new: self.reset(),
            on_delete=lambda _obj: self.reset(),
        )
        for group, version, resource in SERVED_RESOURCE_SOURCES:
            informers.for_resource(group, version, resource).add_event_handler(handler)

    async def _current(self, missed: bool = False) -> Mappings:
        self._subscribe()
        loop = asyncio.get_running_loop()
        fresh = loop.time() - self._read_at < self.min_refresh
        if self._mappings is not None and not self._stale and (not missed or fresh):
            return self._mappings
        if self._reading is None:  # one reading at a time; concurrent lookups share it
            self._reading = loop.create_task(self._read())
        reading = self._reading
        try:
            return await asyncio.shield(reading)
        finally:
            if self._reading is reading and reading.done():
                self._reading = None

    async def _read(self) -> Mappings:
        self._stale = False
        self._read_at = asyncio.get_running_loop().time()
        self.reads += 1
        self._mappings = Mappings(await self.discovery.aggregated())
        return self._mappings

    async def _lookup(self, find: Any) -> RESTMapping | None:
        found = find(await self._current())
        if found is None:
            found = find(await self._current(missed=True))
        return found

    async def kind_for(self, resource: GroupVersionResource, subresource: str = "") -> RESTMapping:
        """The kind a resource (or its subresource) is; NoMatchError when it is not served."""
        found = await self._lookup(lambda m: m.by_resource.get((resource, subresource)))
        if found is None:
            name = f"{resource.resource}/{subresource}" if subresource else resource.resource
            raise NoMatchError(f"no matches for {resource.group}/{resource.version}, Resource={name}")
        return found

    async def rest_mapping(self, kind: GroupVersionKind) -> RESTMapping:
        """The resource serving a kind; NoMatchError when none does."""
        found = await self._lookup(lambda m: m.by_kind.get(kind))
        if found is None:
            raise NoMatchError(f'no matches for kind "{kind.kind}" in version "{kind.group}/{kind.version}"')
        return found
