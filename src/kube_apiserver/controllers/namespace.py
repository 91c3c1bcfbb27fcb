"""The namespace controller: a namespace being deleted is emptied (every namespaced resource in it is
deleted), its conditions say what remains, and once nothing remains the `kubernetes` finalizer is
removed through /finalize, which completes the deletion (k8s namespace deleter)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..apimachinery import errors
from ..apimachinery.meta import now_rfc3339
from ..registry.options import DeleteOptions, ListQuery
from ..registry.rest import UpdatedObjectInfo
from .informer import Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
FINALIZER = "kubernetes"


class NamespaceController(InformerController):
    name = "namespace"

    def __init__(self, namespaces: Resource, status: Any, finalize: Any, resources: list[Resource]):
        self.namespaces = namespaces
        self.status = status  # namespaces/status: conditions are written there
        self.finalize = finalize  # namespaces/finalize: spec.finalizers are written there
        self.namespaced = [r for r in resources if r.namespaced]
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.informers = [Informer(namespaces, self._observe)]

    async def _observe(self, resource: Resource, event_type: str, obj: Object) -> None:
        meta = obj["metadata"]
        if event_type != "DELETED" and meta.get("deletionTimestamp") and \
                FINALIZER in (obj.get("spec") or {}).get("finalizers", []):
            self.queue.put_nowait(meta["name"])


    async def sync(self, name: str) -> bool:
        """Deletes what is left in the namespace; finalizes it when nothing is. Whether it is done."""
        remaining: dict[str, int] = {}
        for resource in self.namespaced:
            ctx = resource.context(name)
            await resource.store.delete_collection(ctx, None, DeleteOptions(propagation_policy="Background"),
                                                  ListQuery())
            left = len((await resource.store.list(ctx, ListQuery()))["items"])
            if left:
                remaining[f"{resource.resource}.{resource.group}" if resource.group else resource.resource] = left
        if remaining:
            await self._report(name, remaining)
            return False
        await self._finalize(name)
        return True

    async def _report(self, name: str, remaining: dict[str, int]) -> None:
        message = "Some resources are remaining: " + ", ".join(
            f"{resource} has {count} resource instances" for resource, count in sorted(remaining.items()))
        condition = {"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": now_rfc3339(),
                     "reason": "SomeResourcesRemain", "message": message}

        async def set_condition(_ctx: Any, ns: Object | None) -> Object:
            if ns is None:
                raise errors.not_found("namespaces", "", name)
            status = ns.setdefault("status", {})
            others = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
            previous = next((c for c in status.get("conditions") or [] if c.get("type") == condition["type"]), None)
            if previous and previous.get("message") == message:
                condition["lastTransitionTime"] = previous.get("lastTransitionTime")
            status["conditions"] = [*others, condition]
            return ns

        await self.status.update(self.namespaces.context(), name, UpdatedObjectInfo(name, set_condition))

    async def _finalize(self, name: str) -> None:
        async def drop(_ctx: Any, ns: Object | None) -> Object:
            if ns is None:
                raise errors.not_found("namespaces", "", name)
            finalizers = [f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != FINALIZER]
            ns.setdefault("spec", {})["finalizers"] = finalizers
            return ns

        try:
            await self.finalize.update(self.namespaces.context(), name, UpdatedObjectInfo(name, drop))
            log.info("namespace controller finalized namespace %s", name)
        except errors.StatusError as err:
            if err.code != 404:
                raise
