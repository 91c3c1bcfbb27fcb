"""Custom resources stored in one version and served in each (pkg/apiserver/conversion): a storage
decorator converting on the way in (to the storage version) and on the way out (to the served one), as
the CRD's conversion strategy says: None rewrites apiVersion; Webhook asks the CRD's webhook."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from ...storage import interface as storage

Object = dict[str, Any]


class Converter(Protocol):
    async def convert(self, objects: list[Object], api_version: str) -> list[Object]: ...

    def convert_now(self, obj: Object, api_version: str) -> Object:
        """A conversion that needs no I/O, for predicates (field selectors) that run inside the storage:
        the apiVersion rewrite (a webhook-converted resource is matched in its stored form)."""
        ...


def rewrite_api_version(obj: Object, api_version: str) -> Object:
    if obj.get("apiVersion") == api_version:
        return obj
    return {**obj, "apiVersion": api_version}


class NoneConverter:
    """strategy: None: only apiVersion changes between versions."""

    async def convert(self, objects: list[Object], api_version: str) -> list[Object]:
        return [rewrite_api_version(obj, api_version) for obj in objects]

    def convert_now(self, obj: Object, api_version: str) -> Object:
        return rewrite_api_version(obj, api_version)


class ConvertingStorage:
    """storage.Interface in `served` over the storage shared by every version, which holds `stored`."""

    def __init__(self, inner: storage.Interface, converter: Converter, served: str, stored: str,
                 on_read: Callable[[Object], Object] | None = None):
        """`on_read`: what reading from storage applies to a stored object (the storage version's
        defaults), returning a new object when it changes anything."""
        self.inner = inner
        self.converter = converter
        self.served, self.stored = served, stored
        self.on_read = on_read
        self.identity = served == stored and on_read is None

    async def _out(self, obj: Object) -> Object:
        if self.on_read is not None:
            obj = self.on_read(obj)
        if obj.get("apiVersion") == self.served:
            return obj
        return (await self.converter.convert([obj], self.served))[0]

    async def _in(self, obj: Object) -> Object:
        if self.identity or obj.get("apiVersion") == self.stored:
            return obj
        return (await self.converter.convert([obj], self.stored))[0]

    def _predicate(self, predicate: storage.Predicate | None) -> storage.Predicate | None:
        if predicate is None or self.identity:
            return predicate
        read = self.on_read or (lambda obj: obj)
        return lambda obj: predicate(self.converter.convert_now(read(obj), self.served))

    async def create(self, key: str, obj: Object, ttl: float = 0) -> Object:
        return await self._out(await self.inner.create(key, await self._in(obj), ttl))

    async def get(self, key: str) -> Object:
        return await self._out(await self.inner.get(key))

    async def get_list(self, key_prefix: str, opts: storage.ListOptions) -> storage.ListResult:
        result = await self.inner.get_list(key_prefix, replace(opts, predicate=self._predicate(opts.predicate)))
        if self.on_read is not None:
            result.items = [self.on_read(item) for item in result.items]
        if not self.identity and result.items:
            pending = [item for item in result.items if item.get("apiVersion") != self.served]
            if pending:
                converted = iter(await self.converter.convert(pending, self.served))
                result.items = [item if item.get("apiVersion") == self.served else next(converted)
                                for item in result.items]
        return result

    async def guaranteed_update(self, key: str, try_update: storage.UpdateFunc,
                                preconditions: storage.Preconditions | None = None,
                                ignore_not_found: bool = False, ttl: storage.TTLFunc | None = None) -> Object:
        async def update(current: Object) -> Object:
            served = await self._out(current) if current else current
            return await self._in(await try_update(served))

        return await self._out(await self.inner.guaranteed_update(key, update, preconditions, ignore_not_found, ttl))

    async def delete(self, key: str, preconditions: storage.Preconditions | None = None,
                     validate_deletion: storage.DeleteValidation | None = None) -> Object:
        check = None
        if validate_deletion is not None:
            async def check(obj: Object) -> None:
                await validate_deletion(await self._out(obj))
        return await self._out(await self.inner.delete(key, preconditions, check))

    async def watch(self, key_prefix: str, resource_version: str, predicate: storage.Predicate | None = None,
                    send_initial_events: bool | None = None, allow_bookmarks: bool = False) -> storage.Watcher:
        watcher = await self.inner.watch(key_prefix, resource_version, self._predicate(predicate),
                                         send_initial_events, allow_bookmarks)
        return watcher if self.identity else ConvertingWatcher(watcher, self._out)

    async def count(self, key_prefix: str) -> int:
        return await self.inner.count(key_prefix)

    async def current_revision(self) -> int:
        return await self.inner.current_revision()


class ConvertingWatcher:
    def __init__(self, inner: storage.Watcher, convert: Callable[[Object], Awaitable[Object]]):
        self.inner = inner
        self.convert = convert

    def __aiter__(self) -> AsyncIterator[storage.WatchEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[storage.WatchEvent]:
        async for event in self.inner:
            if event.type in (storage.ADDED, storage.MODIFIED, storage.DELETED):
                event = storage.WatchEvent(event.type, await self.convert(event.object), event.revision)
            yield event

    def request_bookmark(self) -> None:
        self.inner.request_bookmark()

    async def stop(self) -> None:
        await self.inner.stop()
