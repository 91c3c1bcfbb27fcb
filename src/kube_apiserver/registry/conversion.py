"""Serving a resource at a version other than the one it is stored in: every object is converted
from the stored version on the way out and to it on the way in (k8s stores one version and converts
through the internal type; here the stored version plays the internal type's part).

`ConvertedREST` wraps the Store of the stored version and offers the same REST verbs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..apimachinery import errors, fields
from ..storage.interface import BOOKMARK, ERROR, WatchEvent
from .context import Context
from .options import DeleteOptions, ListQuery
from .rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from .store import Store
from .strategy import Strategy
from .table import TableConvertor

Object = dict[str, Any]
Convert = Callable[[Object], Object]


@dataclass(frozen=True)
class Conversion:
    to_stored: Convert  # served version -> stored version
    from_stored: Convert  # stored version -> served version
    # The served version's field selector labels -> the stored version's (a scheme's field label conversion
    # func); None: the same labels. A label missing from the map is not supported (400).
    field_labels: Mapping[str, str] | None = None


class ConvertedREST:
    def __init__(self, info: ResourceInfo, strategy: Strategy, inner: Store, conversion: Conversion,
                 table: TableConvertor | None = None):
        self.info = info
        self.strategy = strategy  # the served version's defaults
        self.inner = inner
        self.conversion = conversion
        self.table = table or inner.table

    def _out(self, obj: Object) -> Object:
        if obj.get("kind") == "Status":
            return obj
        return self.conversion.from_stored(obj)

    def _validation(self, validate: ValidateObjectFunc | None) -> ValidateObjectFunc | None:
        if validate is None:
            return None

        async def converted(ctx: Context, obj: Object) -> None:
            await validate(ctx, self._out(obj))
        return converted

    def _stored_query(self, query: ListQuery) -> ListQuery:
        """The query with its field selector in the stored version's labels (the list handler's
        ConvertFieldLabel transform)."""
        labels = self.conversion.field_labels
        if labels is None or not query.field_selector:
            return query

        def stored_label(label: str, value: str) -> tuple[str, str]:
            if label not in labels:
                raise ValueError(f"field label not supported: {label}")
            return labels[label], value

        try:
            selector = fields.parse_field_selector(query.field_selector, stored_label)
        except ValueError as err:
            raise errors.bad_request(str(err)) from None
        return dataclasses.replace(query, field_selector=str(selector))

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return self._out(await self.inner.get(ctx, name, options))

    async def list(self, ctx: Context, query: ListQuery) -> Object:
        listed = await self.inner.list(ctx, self._stored_query(query))
        listed["items"] = [self._out(item) for item in listed["items"]]
        listed["apiVersion"], listed["kind"] = self.info.api_version, self.info.list_kind_name
        return listed

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        stored = self.conversion.to_stored(obj)
        return self._out(await self.inner.create(ctx, stored, self._validation(create_validation), options))

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        async def transform(ctx_: Context, old: Object | None) -> Object:
            served = await obj_info.updated_object(ctx_, self._out(old) if old is not None else None)
            return self.conversion.to_stored(served)

        async def validate_update(ctx_: Context, obj: Object, old: Object) -> None:
            if update_validation is not None:
                await update_validation(ctx_, self._out(obj), self._out(old))

        out, created = await self.inner.update(ctx, name, UpdatedObjectInfo(name, transform),
                                               self._validation(create_validation), validate_update,
                                               force_allow_create, options)
        return self._out(out), created

    async def delete(self, ctx: Context, name: str, delete_validation: ValidateObjectFunc | None = None,
                     options: DeleteOptions | None = None) -> tuple[Object, bool]:
        out, gone = await self.inner.delete(ctx, name, self._validation(delete_validation), options)
        return self._out(out), gone

    async def delete_collection(self, ctx: Context, delete_validation: ValidateObjectFunc | None,
                                options: DeleteOptions, query: ListQuery) -> Object:
        listed = await self.inner.delete_collection(ctx, self._validation(delete_validation), options,
                                                    self._stored_query(query))
        listed["items"] = [self._out(item) for item in listed["items"]]
        listed["apiVersion"], listed["kind"] = self.info.api_version, self.info.list_kind_name
        return listed

    async def watch(self, ctx: Context, query: ListQuery) -> ConvertedWatcher:
        return ConvertedWatcher(await self.inner.watch(ctx, self._stored_query(query)), self._out)


class ConvertedWatcher:
    def __init__(self, watcher: Any, convert: Convert):
        self.watcher = watcher
        self.convert = convert
        self.iterator = watcher.__aiter__()

    def __aiter__(self) -> ConvertedWatcher:
        return self

    async def __anext__(self) -> WatchEvent:
        event = await self.iterator.__anext__()
        if event.type in (BOOKMARK, ERROR):
            return event
        return WatchEvent(event.type, self.convert(event.object), event.revision)

    def request_bookmark(self) -> None:
        self.watcher.request_bookmark()

    async def stop(self) -> None:
        await self.watcher.stop()
