"""The objects of a namespaced resource as admission plugins read them (their informer listers): from the
resource's watch cache, and read live when the cache shows none yet (the plugins' live lookup)."""

from __future__ import annotations

import copy
from typing import Any

from ..registry.context import Context, UserInfo
from ..registry.options import ListQuery

Object = dict[str, Any]
ADMISSION_USER = UserInfo("system:apiserver", groups=("system:masters",))
RouteTable = dict[tuple[str, str], dict[str, Any]]
LIVE_LIMIT = 10_000


def route_storage(group_versions: RouteTable, group: str, resource: str, version: str = "v1") -> Any:
    """The registry storage serving group/version/resource, or None when it is not served."""
    route = group_versions.get((group, version), {}).get(resource)
    return route.scope.storage if route is not None else None


class NamespacedLister:
    def __init__(self, resource: str, group: str = ""):
        self.group, self.resource = group, resource
        self.store: Any = None

    def bind(self, group_versions: RouteTable) -> None:
        self.store = route_storage(group_versions, self.group, self.resource)

    async def list(self, namespace: str, live: bool = False) -> list[Object]:
        """Copies of the objects in `namespace` (callers may change them)."""
        if self.store is None:
            return []
        ctx = Context(namespace, ADMISSION_USER)
        items = [] if live else (await self.store.list(ctx, ListQuery(resource_version="0")))["items"]
        if not items:  # a paged read is served by the store itself, at its latest revision
            items = (await self.store.list(ctx, ListQuery(limit=LIVE_LIMIT)))["items"]
        return copy.deepcopy(items)
