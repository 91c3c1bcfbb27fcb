"""quotaAccessor (k8s.io/apiserver/pkg/admission/plugin/resourcequota/resource_access.go): the quotas of a
namespace, newest first of what the cache holds and what this server last wrote, and status writes that
carry the resourceVersion they were computed from (a conflict when the quota changed meanwhile). A
namespace the informer shows without quotas is looked up live, and that answer is kept for 30 s (the
live-lookup LRU), so that creates in namespaces without quotas do not each list them through the
loopback client."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from ...client.informers import SharedInformerFactory
from ..lister import NamespacedLister

Object = dict[str, Any]
UPDATED_CACHE_SIZE = 100
LIVE_LOOKUP_CACHE_SIZE = 100  # namespaces


def _key(quota: Object) -> str:
    meta = quota.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _revision(quota: Object) -> int:
    try:
        return int((quota.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class QuotaAccessor:
    def __init__(self, informers: SharedInformerFactory | None) -> None:
        self.informers = informers
        # The informer's quotas, else a live list kept 30 s (the live-lookup LRU of 100 namespaces).
        self.quotas = NamespacedLister(informers, "resourcequotas", live_cache_size=LIVE_LOOKUP_CACHE_SIZE)
        self.updated: OrderedDict[str, Object] = OrderedDict()

    async def get_quotas(self, namespace: str, live: bool = False) -> list[Object]:
        """`live`: read from the storage, for a retry after a conflict."""
        quotas = await self.quotas.list(namespace, live=live)
        return [self._newest(quota) for quota in quotas]

    def known_without_quotas(self, namespace: str) -> bool:
        """Whether get_quotas(namespace) would answer none right away (the informer and a fresh live lookup
        both show none): a write there is admitted without being queued."""
        return self.quotas.known_empty(namespace)

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
        """UpdateStatus through the loopback client: a 409 Conflict when the quota's resourceVersion is no
        longer current."""
        client = self.quotas.client
        assert client is not None  # there are quotas to update only when they were listed
        out = await client.namespace(quota["metadata"].get("namespace", "")).update_status(quota)
        self.updated[_key(out)] = out
        self.updated.move_to_end(_key(out))
        while len(self.updated) > UPDATED_CACHE_SIZE:
            self.updated.popitem(last=False)
        return out
