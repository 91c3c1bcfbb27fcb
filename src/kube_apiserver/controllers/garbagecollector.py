"""The garbage collector (kube-controller-manager's): it keeps a graph of owner references and
- deletes an object whose owners are all gone (background cascading deletion);
- for an owner deleted with propagationPolicy=Orphan (finalizer `orphan`), removes the owner's
  references from its dependents, then the finalizer;
- for one deleted with Foreground (finalizer `foregroundDeletion`), deletes its dependents and removes
  the finalizer once no dependent that blocks owner deletion remains.
Absence of an owner is always confirmed against the store, never assumed from the graph."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Any

from ..apimachinery import errors
from ..registry.options import DeleteOptions
from ..registry.rest import UpdatedObjectInfo
from ..registry.store import FOREGROUND, ORPHAN
from .informer import Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
RETRY_SECONDS = 1.0


class Node:
    __slots__ = ("resource", "namespace", "name", "uid", "owners", "deleting", "finalizers")

    def __init__(self, resource: Resource, obj: Object):
        meta = obj["metadata"]
        self.resource = resource
        self.namespace = meta.get("namespace", "")
        self.name = meta["name"]
        self.uid = meta.get("uid", "")
        self.owners: list[Object] = list(meta.get("ownerReferences") or [])
        self.deleting = bool(meta.get("deletionTimestamp"))
        self.finalizers: list[str] = list(meta.get("finalizers") or [])


class GarbageCollector(InformerController):
    name = "garbagecollector"

    def __init__(self, resources: list[Resource]):
        self.resources = resources
        self.by_kind = {(r.api_version, r.kind): r for r in resources}
        self.nodes: dict[str, Node] = {}
        self.dependents: dict[str, set[str]] = defaultdict(set)
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.informers = [Informer(r, self._observe) for r in resources]

    # ---- the graph ----

    async def _observe(self, resource: Resource, event_type: str, obj: Object) -> None:
        uid = obj["metadata"].get("uid", "")
        old = self.nodes.pop(uid, None)
        refs = list(old.owners) if old is not None else []
        for ref in refs:
            self.dependents[ref.get("uid", "")].discard(uid)
        if event_type == "DELETED":
            for dependent in self.dependents.get(uid, ()):
                self.queue.put_nowait(dependent)  # an owner went away
        else:
            node = self.nodes[uid] = Node(resource, obj)
            for ref in node.owners:
                self.dependents[ref.get("uid", "")].add(uid)
            if node.owners or (node.deleting and {ORPHAN, FOREGROUND} & set(node.finalizers)):
                self.queue.put_nowait(uid)
            refs += node.owners
        for ref in refs:
            owner = self.nodes.get(ref.get("uid", ""))
            if owner is not None and owner.deleting and FOREGROUND in owner.finalizers:
                self.queue.put_nowait(owner.uid)  # a dependent of a foreground deletion changed

    async def _work(self) -> None:
        while True:
            uid = await self.queue.get()
            node = self.nodes.get(uid)
            if node is None:
                continue
            try:
                await self._process(node)
            except Exception as err:  # noqa: BLE001 - retried shortly
                log.info("garbage collector: %s %s/%s: %s", node.resource.resource, node.namespace, node.name, err)
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self.queue.put_nowait, uid)

    async def _process(self, node: Node) -> None:
        if node.deleting and ORPHAN in node.finalizers:
            await self._orphan_dependents(node)
        elif node.deleting and FOREGROUND in node.finalizers:
            await self._delete_dependents(node)
        elif node.owners and not node.deleting:
            await self._collect_if_owners_gone(node)

    # ---- orphan ----

    async def _orphan_dependents(self, owner: Node) -> None:
        for uid in list(self.dependents.get(owner.uid, ())):
            dependent = self.nodes.get(uid)
            if dependent is not None:
                await self._update(dependent, lambda obj: _drop_owner(obj, owner.uid))
        await self._update(owner, lambda obj: _drop_finalizer(obj, ORPHAN))

    # ---- foreground ----

    async def _delete_dependents(self, owner: Node) -> None:
        blocking = 0
        for uid in list(self.dependents.get(owner.uid, ())):
            dependent = self.nodes.get(uid)
            if dependent is None:
                continue
            ref = next((r for r in dependent.owners if r.get("uid") == owner.uid), {})
            if ref.get("blockOwnerDeletion"):
                blocking += 1
            if not dependent.deleting:
                await self._delete(dependent, "Foreground" if self.dependents.get(uid) else "Background")
        if blocking == 0:
            await self._update(owner, lambda obj: _drop_finalizer(obj, FOREGROUND))

    # ---- background ----

    async def _collect_if_owners_gone(self, node: Node) -> None:
        present = [ref for ref in node.owners if await self._owner_exists(node, ref)]
        if present == node.owners:
            return
        if not present:
            await self._delete(node, "Background")
            return
        dangling = {ref.get("uid") for ref in node.owners} - {ref.get("uid") for ref in present}
        await self._update(node, lambda obj: _drop_owners(obj, dangling))

    async def _owner_exists(self, node: Node, ref: Object) -> bool:
        resource = self.by_kind.get((ref.get("apiVersion", ""), ref.get("kind", "")))
        if resource is None:
            return True  # an owner of a kind not served here: never collect on a guess
        namespace = node.namespace if resource.namespaced else ""
        try:
            owner = await resource.store.get(resource.context(namespace), ref.get("name", ""))
        except errors.StatusError as err:
            if err.code == 404:
                return False
            raise
        return owner["metadata"].get("uid") == ref.get("uid")

    # ---- writes ----

    async def _update(self, node: Node, change: Any) -> None:
        async def transform(_ctx: Any, old: Object | None) -> Object:
            if old is None:
                raise errors.not_found(node.resource.resource, node.resource.group, node.name)
            return change(old)

        try:
            await node.resource.store.update(node.resource.context(node.namespace), node.name,
                                             UpdatedObjectInfo(node.name, transform))
        except errors.StatusError as err:
            if err.code != 404:
                raise

    async def _delete(self, node: Node, policy: str) -> None:
        options = DeleteOptions(propagation_policy=policy, preconditions_uid=node.uid)
        try:
            await node.resource.store.delete(node.resource.context(node.namespace), node.name, None, options)
            log.info("garbage collector deleted %s %s/%s", node.resource.resource, node.namespace, node.name)
        except errors.StatusError as err:
            if err.code not in (404, 409):
                raise


def _drop_owner(obj: Object, uid: str) -> Object:
    return _drop_owners(obj, {uid})


def _drop_owners(obj: Object, uids: set[Any]) -> Object:
    meta = obj["metadata"]
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") not in uids]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return obj


def _drop_finalizer(obj: Object, finalizer: str) -> Object:
    meta = obj["metadata"]
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
    if not meta["finalizers"]:
        del meta["finalizers"]
    return obj
