"""componentstatuses (pkg/registry/core/componentstatus): read-only, computed on every request. kube-apiserver
reports the health of its etcd servers (etcd-0...); here `etcd-0` is this server's own storage, probed by
reading its current revision. Deprecated since v1.19: every answer carries that warning."""

from __future__ import annotations

import asyncio
from typing import Any

from ...apimachinery import errors
from ...registry.context import Context
from ...registry.options import ListQuery, Selection, compile_selection
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.table import NAME, TableConvertor, name
from ...storage import interface as storage
from ...storage.factory import StorageFactory

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "componentstatuses", "ComponentStatus", "componentstatus", False, short_names=("cs",))
DEPRECATED = "v1 ComponentStatus is deprecated in v1.19+"
STORAGE_COMPONENT = "etcd-0"


def component_status(component: str, healthy: bool, message: str, error: str) -> Object:
    condition: Object = {"type": "Healthy", "status": "True" if healthy else "False"}
    if message:
        condition["message"] = message
    if error:
        condition["error"] = error
    return {"kind": INFO.kind, "apiVersion": INFO.api_version,
            "metadata": {"name": component, "creationTimestamp": None}, "conditions": [condition]}


class StatusWatcher:
    """A watch of computed objects: each once as ADDED, then nothing more until it ends."""

    def __init__(self, items: list[Object]):
        self.events = [storage.WatchEvent(storage.ADDED, item, 0) for item in items]
        self.stopped = asyncio.Event()

    def __aiter__(self) -> StatusWatcher:
        return self

    async def __anext__(self) -> storage.WatchEvent:
        if self.events:
            return self.events.pop(0)
        await self.stopped.wait()
        raise StopAsyncIteration

    def request_bookmark(self) -> None:
        pass

    async def stop(self) -> None:
        self.stopped.set()


class ComponentStatusREST:
    """get, list and watch; label and field selectors filter what is computed. Every request gets the
    deprecation warning (the installer adds a storage's `warnings`)."""

    warnings = (DEPRECATED,)

    def __init__(self, store: storage.Interface):
        self.info = INFO
        self.store = store
        self.table = TABLE

    async def _storage_status(self) -> Object:
        try:
            await self.store.current_revision()
        except Exception as err:  # noqa: BLE001 - any failure of the probe is reported, as EtcdServer does
            return component_status(STORAGE_COMPONENT, False, "", str(err))
        return component_status(STORAGE_COMPONENT, True, "ok", "")

    async def _statuses(self, ctx: Context) -> list[Object]:
        return [await self._storage_status()]

    async def get(self, ctx: Context, name_: str, options: dict[str, Any] | None = None) -> Object:
        for status in await self._statuses(ctx):
            if status["metadata"]["name"] == name_:
                return status
        raise errors.StatusError(500, "", f"Component not found: {name_}")

    def _selected(self, query: ListQuery) -> Selection:
        """DefaultMetaV1FieldSelectorConversion: only metadata.name and metadata.namespace may be selected."""
        return compile_selection(query, lambda o: {"metadata.name": name(o), "metadata.namespace": ""},
                                 {"metadata.name", "metadata.namespace"})

    async def list(self, ctx: Context, query: ListQuery) -> Object:
        selection = self._selected(query)
        items = [s for s in await self._statuses(ctx) if selection.empty or selection.matches(s)]
        return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}

    async def watch(self, ctx: Context, query: ListQuery) -> StatusWatcher:
        return StatusWatcher((await self.list(ctx, query))["items"])


def _row(obj: Object) -> list[Any]:
    status, message, error = "Unknown", "", ""
    for condition in obj.get("conditions") or []:
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = condition.get("message") or "", condition.get("error") or ""
            break
    return [name(obj), status, message, error]


TABLE = TableConvertor((
    NAME,
    TableColumn("Status", "string", "", "Status of the component conditions"),
    TableColumn("Message", "string", "", "Message of the component conditions"),
    TableColumn("Error", "string", "", "Error of the component conditions"),
), _row)


def new_rest(storage_: StorageFactory) -> dict[str, Any]:
    return {"componentstatuses": ComponentStatusREST(storage_.store)}
