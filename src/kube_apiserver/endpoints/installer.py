"""Installing a group version's REST storage as routes (k8s APIInstaller): which verbs a resource
answers follows from which REST interfaces its storage implements, never from a list kept elsewhere."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol

from ..apimachinery import errors
from ..apimachinery.managedfields import FieldManager
from ..apimachinery.openapischema import NO_SCHEMAS, SchemaSource
from ..registry import rest
from ..registry.table import default_table_convertor
from . import negotiation
from .handlers import connect, create, delete, get, patch, update, watch
from .handlers.scope import RequestScope
from .http import Request, Response

VerbHandler = Callable[[RequestScope, Request], Awaitable[Response]]

# verb -> (the interface the storage must implement, the handler)
VERBS: dict[str, tuple[type, VerbHandler]] = {
    "create": (rest.Creater, create.create),
    "delete": (rest.GracefulDeleter, delete.delete),
    "deletecollection": (rest.CollectionDeleter, delete.delete_collection),
    "get": (rest.Getter, get.get),
    "list": (rest.Lister, get.list_),
    "patch": (rest.Patcher, patch.patch_resource),
    "update": (rest.Updater, update.update),
    "watch": (rest.Watcher, watch.watch),
}


def _protocol_members(protocol: type) -> tuple[str, ...]:
    """The names a runtime-checkable Protocol requires (its methods and annotated attributes, inherited ones
    too), as isinstance() finds them on every call."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in (object, Protocol, Generic):
            continue
        names.update(n for n in (*vars(base), *getattr(base, "__annotations__", {})) if not n.startswith("_"))
    return tuple(sorted(names))


# isinstance() against a runtime-checkable Protocol walks the protocol's classes for its members on every call
# (~25 us): ten checks per storage, ~110 storages, ~25 ms of every start. Their members are read once here.
_MEMBERS = {p: _protocol_members(p) for p in (*(iface for iface, _ in VERBS.values()), rest.Connecter)}


def implements(storage: object, protocol: type) -> bool:
    """isinstance(storage, protocol) for the REST interfaces above: every member present, a method not None."""
    for name in _MEMBERS[protocol]:
        if not hasattr(storage, name):
            return False
        if callable(getattr(protocol, name, None)) and getattr(storage, name) is None:
            return False
    return True


def storage_version_hash(group: str, version: str, kind: str) -> str:
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


@dataclass
class ResourceRoutes:
    """Everything served for one resource or subresource path."""

    scope: RequestScope
    handlers: dict[str, VerbHandler]

    @property
    def verbs(self) -> list[str]:
        return sorted(self.handlers)

    async def serve(self, req: Request) -> Response:
        if self.scope.warnings:  # a deprecated version's, on every request
            req.values.setdefault("warnings", []).extend(self.scope.warnings)
        handler = self.handlers.get(req.info.verb) or self.handlers.get("connect")
        if handler is None:
            raise errors.method_not_supported(self.scope.info.resource, self.scope.info.group, req.info.verb)
        if self.scope.table is None and "connect" not in getattr(self.scope.storage, "connect_verbs", ()):
            # The handlers negotiate the response first (NegotiateOutputMediaType; connecters that stream,
            # exec or proxy, do not): a Table asked of a storage that converts none is not acceptable, before
            # the request does anything.
            negotiation.negotiate(req.headers.get("accept", ""), self.scope.conversions, protobuf=True)
        return await handler(self.scope, req)


@dataclass
class APIGroupVersion:
    """The REST storage of one group version, keyed "resource" or "resource/subresource"."""

    group: str
    version: str
    storage: dict[str, Any]
    scope_options: dict[str, Any] = field(default_factory=dict)
    schemas: SchemaSource = NO_SCHEMAS

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def install(self) -> dict[str, ResourceRoutes]:
        routes: dict[str, ResourceRoutes] = {}
        for path, storage in self.storage.items():
            # Listers convert to tables (a default one at least); other storages only if they say how
            # (rest.TableConvertor): reviews, bindings, evictions and token requests do not.
            table = getattr(storage, "table", None)
            if table is None and implements(storage, rest.Lister):
                table = default_table_convertor()
            info = storage.info
            schema = self.schemas.for_kind(info.group, info.version, info.kind)
            reset = getattr(getattr(storage, "strategy", None), "reset_fields", ())
            manager = FieldManager(schema, info.api_version, kind=info.kind, reset_fields=reset)
            scope = RequestScope(info, storage, table=table, schema=schema, field_manager=manager,
                                 warnings=tuple(getattr(storage, "warnings", ())), **self.scope_options)
            handlers = {verb: handler for verb, (iface, handler) in VERBS.items() if implements(storage, iface)}
            if implements(storage, rest.Connecter):
                handlers = dict.fromkeys(storage.connect_verbs, connect.connect)
            routes[path] = ResourceRoutes(scope, handlers)
        return routes

    def api_resources(self, routes: dict[str, ResourceRoutes]) -> list[dict[str, Any]]:
        """The APIResourceList entries of /api/v1 or /apis/<group>/<version>."""
        resources = []
        for path in sorted(routes):
            r = routes[path]
            info = r.scope.info
            entry: dict[str, Any] = {"name": path, "singularName": info.singular if "/" not in path else "",
                                     "namespaced": info.namespaced}
            if (info.group, info.version) != (self.group, self.version):
                # A subresource of another group's kind (GroupVersionKindProvider: pods/eviction, */scale).
                entry["group"], entry["version"] = info.group, info.version
            entry.update(kind=info.kind, verbs=r.verbs)
            if "/" not in path:
                if info.short_names:
                    entry["shortNames"] = list(info.short_names)
                if info.categories:
                    entry["categories"] = list(info.categories)
                # The version objects are stored in (a converting storage's inner one) names the hash.
                stored = getattr(getattr(r.scope.storage, "inner", None), "info", info)
                entry["storageVersionHash"] = storage_version_hash(stored.group, stored.version, stored.kind)
            resources.append(entry)
        return resources
