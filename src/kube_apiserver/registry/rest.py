"""The REST interfaces the endpoint installer looks for (k8s.io/apiserver/pkg/registry/rest), and the
description of a resource that discovery, routes and tables are derived from."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .context import Context

Object = dict[str, Any]
# Validation hooks the handler passes down: validating admission, run after the strategy.
ValidateObjectFunc = Callable[[Context, Object], Awaitable[None]]
ValidateObjectUpdateFunc = Callable[[Context, Object, Object], Awaitable[None]]


@dataclass(frozen=True)
class TableColumn:
    name: str
    type: str
    format: str = ""
    description: str = ""
    priority: int = 0


@dataclass(frozen=True)
class ResourceInfo:
    """A resource as served at one group/version: what discovery and the installer publish."""

    group: str
    version: str
    resource: str  # plural, lower case
    kind: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    list_kind: str = ""
    subresource: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind_name(self) -> str:
        return self.list_kind or f"{self.kind}List"


@dataclass
class UpdatedObjectInfo:
    """How an update computes the new object from the stored one (a PUT body, a patch...)."""

    name: str
    transform: Callable[[Context, Object | None], Awaitable[Object]]
    # Mutating admission, applied to the new object inside the optimistic-concurrency loop.
    admission: list[Callable[[Context, Object, Object | None], Awaitable[Object]]] = field(default_factory=list)

    async def updated_object(self, ctx: Context, old: Object | None) -> Object:
        obj = await self.transform(ctx, old)
        for admit in self.admission:
            obj = await admit(ctx, obj, old)
        return obj


@runtime_checkable
class Getter(Protocol):
    async def get(self, ctx: Context, name: str, options: dict[str, Any]) -> Object: ...


@runtime_checkable
class Lister(Protocol):
    async def list(self, ctx: Context, options: Any) -> Object: ...


@runtime_checkable
class Watcher(Protocol):
    async def watch(self, ctx: Context, options: Any) -> Any: ...


@runtime_checkable
class Creater(Protocol):
    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None,
                     options: dict[str, Any]) -> Object: ...


@runtime_checkable
class Updater(Protocol):
    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None,
                     update_validation: ValidateObjectUpdateFunc | None,
                     force_allow_create: bool, options: dict[str, Any]) -> tuple[Object, bool]: ...


@runtime_checkable
class Patcher(Protocol):
    """A resource that can be patched: an Updater that is also a Getter."""

    async def get(self, ctx: Context, name: str, options: dict[str, Any]) -> Object: ...

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None,
                     update_validation: ValidateObjectUpdateFunc | None,
                     force_allow_create: bool, options: dict[str, Any]) -> tuple[Object, bool]: ...


@runtime_checkable
class GracefulDeleter(Protocol):
    async def delete(self, ctx: Context, name: str, delete_validation: ValidateObjectFunc | None,
                     options: dict[str, Any]) -> tuple[Object, bool]: ...


@runtime_checkable
class CollectionDeleter(Protocol):
    async def delete_collection(self, ctx: Context, delete_validation: ValidateObjectFunc | None,
                                options: dict[str, Any], list_options: Any) -> Object: ...


@runtime_checkable
class Connecter(Protocol):
    """A subresource that answers a request itself (k8s rest.Connecter: pods/exec, pods/log, pods/proxy...).
    `connect_verbs` are the verbs it is published and routed under (k8s lists them as `connect`)."""

    connect_verbs: tuple[str, ...]

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Any: ...


@runtime_checkable
class TableConvertor(Protocol):
    def convert_to_table(self, ctx: Context, obj: Object, include_object: str) -> Object: ...
