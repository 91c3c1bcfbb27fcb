"""What the server serves, as the namespace controller discovers it (client-go's
ServerPreferredNamespacedResources): every group's resources in its preferred version, each with its
discovery verbs and a client to list and delete it, plus the group versions whose discovery failed.
Sources: the chain's own group versions (built-in and custom resources, read from its route tables) and
whatever registers more (the aggregator's aggregated API servers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..client import rest
from ..registry.context import Context
from ..registry.options import DeleteOptions, ListQuery
from .informer import CONTROLLER_USER

Object = dict[str, Any]
BACKGROUND = DeleteOptions(propagation_policy="Background")


class ResourceClient(Protocol):
    """Lists and deletes one resource's objects in a namespace (a dynamic/metadata client's subset)."""

    async def list(self, namespace: str) -> list[Object]: ...

    async def delete_collection(self, namespace: str) -> None: ...

    async def delete(self, namespace: str, name: str) -> None: ...


@dataclass(frozen=True)
class DiscoveredResource:
    group: str
    version: str
    resource: str
    namespaced: bool
    verbs: frozenset[str]
    client: ResourceClient = field(compare=False)

    def gvr(self) -> str:
        """schema.GroupVersionResource's String(), as upstream's messages print it."""
        return f"{self.group}/{self.version}, Resource={self.resource}"


@dataclass
class Discovered:
    resources: list[DiscoveredResource] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # group version -> why its discovery failed

    def error(self) -> str:
        """discovery.ErrGroupDiscoveryFailed's text ("" when nothing failed)."""
        if not self.failed:
            return ""
        groups = sorted(f"{gv}: {why}" for gv, why in self.failed.items())
        return "unable to retrieve the complete list of server APIs: " + ", ".join(groups)


Source = Callable[[], Discovered]


class ServerResources:
    """The preferred version of every group's resources, from every registered source."""

    def __init__(self, *sources: Source):
        self.sources = list(sources)

    def add_source(self, source: Source) -> None:
        self.sources.append(source)

    def preferred_namespaced(self) -> Discovered:
        out = Discovered()
        seen: set[tuple[str, str]] = set()
        for source in self.sources:
            found = source()
            out.failed.update(found.failed)
            for resource in found.resources:
                if resource.namespaced and (resource.group, resource.resource) not in seen:
                    seen.add((resource.group, resource.resource))
                    out.resources.append(resource)
        return out


class StoreClient:
    """A resource served by this process: its registry storage, called as the controller's user."""

    def __init__(self, store: Any):
        self.store = store

    async def list(self, namespace: str) -> list[Object]:
        return (await self.store.list(Context(namespace, CONTROLLER_USER), ListQuery()))["items"]

    async def delete_collection(self, namespace: str) -> None:
        await self.store.delete_collection(Context(namespace, CONTROLLER_USER), None, BACKGROUND, ListQuery())

    async def delete(self, namespace: str, name: str) -> None:
        await self.store.delete(Context(namespace, CONTROLLER_USER), name, None, BACKGROUND)


class LoopbackResourceClient:
    """A resource through the loopback client (the namespace deleter's dynamic client): its deletions are
    admitted and audited as system:apiserver, with background propagation as the deleter asks."""

    OPTIONS = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}

    def __init__(self, api: rest.ResourceClient):
        self.api = api

    async def list(self, namespace: str) -> list[Object]:
        return (await self.api.namespace(namespace).list())["items"]

    async def delete_collection(self, namespace: str) -> None:
        await self.api.namespace(namespace).delete_collection(self.OPTIONS)

    async def delete(self, namespace: str, name: str) -> None:
        await self.api.namespace(namespace).delete(name, self.OPTIONS)


def chain_routes(server: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """Every group version's routes down a chain of servers (this one's first, then its delegates')."""
    routes: dict[tuple[str, str], dict[str, Any]] = {}
    while server is not None and hasattr(server, "restful"):
        for key, value in server.restful.group_versions.items():
            routes.setdefault(key, value)
        server = getattr(server, "delegate", None)
    return routes


def local_resources(server: Any, loopback: Callable[[], rest.Client | None] = lambda: None) -> Source:
    """The chain's own group versions, in the shared discovery manager's preference order: for each
    resource its group's preferred version when that serves it, else the first that does. Each is called
    through `loopback()`, the server's loopback client (its registry storage while there is none)."""

    def client_for(group: str, version: str, resource: str, route: Any) -> ResourceClient:
        client = loopback()
        if client is None:
            return StoreClient(route.scope.storage)
        return LoopbackResourceClient(client.resource(group, version, resource))

    def discover() -> Discovered:
        routes = chain_routes(server)
        out = Discovered()
        for group, versions in list(server.config.discovery.groups.items()):
            chosen: dict[str, DiscoveredResource] = {}
            for gv in versions:
                served = routes.get((group, gv.version), {})
                for entry in gv.resources:
                    name = entry.get("name", "")
                    route = served.get(name)
                    if "/" in name or name in chosen or route is None:
                        continue
                    chosen[name] = DiscoveredResource(group, gv.version, name, bool(entry.get("namespaced")),
                                                      frozenset(entry.get("verbs") or ()),
                                                      client_for(group, gv.version, name, route))
            out.resources.extend(chosen.values())
        return out

    return discover
