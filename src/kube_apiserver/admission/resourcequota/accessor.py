"""quotaAccessor (k8s.io/apiserver/pkg/admission/plugin/resourcequota/resource_access.go): the quotas of a
namespace, newest first of what the cache holds and what this server last wrote, and status writes that
carry the resourceVersion they were computed from (a conflict when the quota changed meanwhile)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo
from ..lister import ADMISSION_USER, NamespacedLister, RouteTable, route_storage

Object = dict[str, Any]
UPDATED_CACHE_SIZE = 100


def _key(quota: Object) -> str:
    meta = quota.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _revision(quota: Object) -> int:
    try:
        return int((quota.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class QuotaAccessor:
    def __init__(self) -> None:
        self.quotas = NamespacedLister("resourcequotas")
        self.status: Any = None
        self.updated: OrderedDict[str, Object] = OrderedDict()

    def bind(self, group_versions: RouteTable) -> None:
        self.quotas.bind(group_versions)
        self.status = route_storage(group_versions, "", "resourcequotas/status")

    async def get_quotas(self, namespace: str, live: bool = False) -> list[Object]:
        return [self._newest(quota) for quota in await self.quotas.list(namespace, live)]

    def _newest(self, quota: Object) -> Object:
        """checkCache: what this server wrote last, when the cache has not caught up with it yet."""
        key = _key(quota)
        written = self.updated.get(key)
        if written is None:
            return quota
        if _revision(quota) >= _revision(written):
            del self.updated[key]
            return quota
        return copy.deepcopy(written)

    async def update_status(self, quota: Object) -> Object:
        """UpdateStatus: a 409 Conflict when the quota's resourceVersion is no longer current."""
        meta = quota["metadata"]

        async def replace(_ctx: Context, _old: Object | None) -> Object:
            return copy.deepcopy(quota)

        ctx = Context(meta.get("namespace", ""), ADMISSION_USER)
        out, _ = await self.status.update(ctx, meta["name"], UpdatedObjectInfo(meta["name"], replace), None, None,
                                          False, {})
        self.updated[_key(out)] = out
        self.updated.move_to_end(_key(out))
        while len(self.updated) > UPDATED_CACHE_SIZE:
            self.updated.popitem(last=False)
        return out
