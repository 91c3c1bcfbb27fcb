"""The objects of a resource as admission plugins read them (their informer listers): from the server's
shared informer on the loopback client (started on first use), and read live through the loopback client
when the informer shows none yet (the plugins' live lookup)."""

from __future__ import annotations

import copy
from typing import Any

from ..apimachinery import errors
from ..client.informers import Lister, SharedInformerFactory
from ..client.rest import ResourceClient

Object = dict[str, Any]
LIVE_LIMIT = 10_000


class NamespacedLister:
    """A resource's objects by namespace ("" for a cluster-scoped resource). Without an informer factory
    (a server without a loopback client) it knows no objects."""

    def __init__(
        self, informers: SharedInformerFactory | None, resource: str, group: str = "", version: str = "v1"
    ):
        self.group, self.resource, self.version = group, resource, version
        self.informers = informers

    @property
    def client(self) -> ResourceClient | None:
        return (
            None
            if self.informers is None
            else self.informers.client.resource(self.group, self.version, self.resource)
        )

    async def list(self, namespace: str, live: bool = False) -> list[Object]:
        """Copies of the objects in `namespace` (callers may change them)."""
        if self.informers is None:
            return []
        items: list[Object] = []
        if not live:
            items = await Lister(self.informers.for_resource(self.group, self.version, self.resource)).list(
                namespace
            )
        if not items:  # a paged read is served by the store itself, at its latest revision
            items = await self._live(namespace)
        return copy.deepcopy(items)

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
