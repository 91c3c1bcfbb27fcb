"""The garbage collector (kube-controller-manager's pkg/controller/garbagecollector): a graph of owner
references, built from informers, and one queue of objects to look at:
- an object whose owners are all gone is deleted (background cascading deletion); one that keeps a live
  ("solid") owner only loses its references to owners that are gone or waiting for their dependents;
- an owner deleted with propagationPolicy=Orphan (finalizer `orphan`) has its references removed from
  its dependents, then the finalizer;
- an owner deleted with Foreground (finalizer `foregroundDeletion`) has its dependents deleted (those with
  dependents of their own in foreground too) and loses the finalizer once no dependent blocks it. A
  dependent whose own dependent also waits for its dependents is an owner-reference cycle: its references
  are made non-blocking before it is deleted, so the cycle unwinds (attemptToDeleteItem).
What the graph says is checked against the store before anything is written or deleted. The resources
watched are re-read every few seconds (GarbageCollector.Sync's resync of deletable resources), so custom
resources are collected and collect as built-in ones do."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from ..apimachinery.wait import Periodic
from ..registry.store import FOREGROUND, ORPHAN
from .informer import Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 300.0
UPDATE_ATTEMPTS = 3  # a conflicting update is read and tried again this many times in all
# How often the watched resources are brought in line with those served (upstream: 30 s; a new CRD's
# objects are cheap to pick up sooner here, where reading the served resources costs no request).
RESYNC_SECONDS = 2.0


class NamespacedOwnerOfClusterScopedObject(Exception):
    """A cluster-scoped object names a namespaced owner: invalid, so never collected on its account."""


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

    @property
    def deleting_dependents(self) -> bool:
        """Being deleted in foreground: waiting for the dependents that block it."""
        return self.deleting and FOREGROUND in self.finalizers

    @property
    def orphaning(self) -> bool:
        return self.deleting and ORPHAN in self.finalizers

    def blocks(self, owner_uid: str) -> bool:
        """Whether this object's reference to that owner blocks the owner's foreground deletion."""
        return any(ref.get("uid") == owner_uid and ref.get("blockOwnerDeletion") for ref in self.owners)


@dataclass
class References:
    """An object's owner references as the store answers for each owner (classifyReferences)."""

    solid: list[Object] = field(default_factory=list)  # the owner exists and is not waiting
    dangling: list[Object] = field(default_factory=list)  # the owner is gone (or has another uid)
    waiting: list[Object] = field(default_factory=list)  # the owner is deleted in foreground


class GarbageCollector(InformerController):
    name = "garbagecollector"

    def __init__(self, served: Callable[[], list[Resource]]):
        """`served`: the resources that can be listed, watched and deleted now (every version of each)."""
        self.served = served
        self.by_kind: dict[tuple[str, str], Resource] = {}
        self.watched: dict[tuple[str, str], Informer] = {}  # (group, resource) -> its informer
        self.nodes: dict[str, Node] = {}
        self.dependents: dict[str, set[str]] = defaultdict(set)
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.queued: set[str] = set()  # a uid waits in the queue once, as in a workqueue
        self.failures: dict[str, int] = {}  # uid -> failed attempts in a row (the retry backs off)
        self.retrying: set[str] = set()
        self.informers: list[Informer] = []
        self._resync = Periodic("garbage collector resync", RESYNC_SECONDS, self._sync_resources)

    async def start(self) -> None:
        await self._sync_resources()
        await super().start()
        self._resync.start()

    async def stop(self) -> None:
        await self._resync.stop()
        await super().stop()

    async def _sync_resources(self) -> None:
        """Watches one version of every served resource, and looks owners up in any served version;
        resources no longer served stop being watched (resyncMonitors)."""
        resources = self.served()
        self.by_kind = {(r.api_version, r.kind): r for r in resources}
        wanted: dict[tuple[str, str], Resource] = {}
        for resource in resources:
            wanted.setdefault((resource.group, resource.resource), resource)
        # A resource served by another store now (a CRD deleted and created again) is watched afresh.
        for key in [key for key, informer in self.watched.items()
                    if key not in wanted or wanted[key].store is not informer.resource.store]:
            informer = self.watched.pop(key)
            self.informers.remove(informer)
            await informer.stop()
        for key, resource in wanted.items():
            if key not in self.watched:
                informer = self.watched[key] = Informer(resource, self._observe)
                self.informers.append(informer)
                if self._worker is not None:
                    informer.start()  # already running: start it now (start() starts the first ones)

    def _enqueue(self, uid: str) -> None:
        if uid not in self.queued:
            self.queued.add(uid)
            self.queue.put_nowait(uid)

    # ---- the graph (GraphBuilder.processGraphChanges) ----

    async def _observe(self, resource: Resource, event_type: str, obj: Object) -> None:
        uid = obj["metadata"].get("uid", "")
        old = self.nodes.pop(uid, None)
        if old is not None:
            for ref in old.owners:
                self.dependents[ref.get("uid", "")].discard(uid)
        if event_type == "DELETED":
            self.failures.pop(uid, None)
            self._removed(old or Node(resource, obj))
            return
        node = self.nodes[uid] = Node(resource, obj)
        for ref in node.owners:
            self.dependents[ref.get("uid", "")].add(uid)
        if old is None or old.owners != node.owners:
            self._owners_changed(old, node)
        self._transitions(old, node)

    def _removed(self, node: Node) -> None:
        for dependent in self.dependents.pop(node.uid, set()):
            self._enqueue(dependent)  # an owner went away
        for ref in node.owners:  # an owner waiting for its dependents may be done now
            owner = self.nodes.get(ref.get("uid", ""))
            if owner is not None and owner.deleting_dependents:
                self._enqueue(owner.uid)

    def _owners_changed(self, old: Node | None, node: Node) -> None:
        if node.owners:
            self._enqueue(node.uid)  # are its owners still there?
        if old is None:
            return
        kept = {(ref.get("uid"), bool(ref.get("blockOwnerDeletion"))) for ref in node.owners}
        for ref in old.owners:  # a reference removed or unblocked may unblock a foreground deletion
            owner = self.nodes.get(ref.get("uid", ""))
            if (ref.get("uid"), bool(ref.get("blockOwnerDeletion"))) not in kept and owner is not None \
                    and owner.deleting_dependents:
                self._enqueue(owner.uid)

    def _transitions(self, old: Node | None, node: Node) -> None:
        """processTransitions: the start of an orphaning or of a foreground deletion."""
        if node.orphaning and not (old is not None and old.orphaning):
            self._enqueue(node.uid)
        elif node.deleting_dependents and not (old is not None and old.deleting_dependents):
            for dependent in list(self.dependents.get(node.uid, ())):
                self._enqueue(dependent)
            self._enqueue(node.uid)

    def _dependent_nodes(self, uid: str) -> list[Node]:
        return [node for dep in list(self.dependents.get(uid, ())) if (node := self.nodes.get(dep)) is not None]

    # ---- the worker ----

    async def _work(self) -> None:
        while True:
            uid = await self.queue.get()
            self.queued.discard(uid)
            node = self.nodes.get(uid)
            if node is None:
                continue
            try:
                await self._process(node)
                self.failures.pop(uid, None)
            except NamespacedOwnerOfClusterScopedObject as err:  # retrying cannot resolve it: left alone
                log.info("garbage collector: %s %s: %s", node.resource.resource, node.name, err)
            except Exception as err:  # noqa: BLE001 - retried, later each time (a rate-limited requeue)
                log.info("garbage collector: %s %s/%s: %s", node.resource.resource, node.namespace, node.name, err)
                failures = self.failures[uid] = self.failures.get(uid, 0) + 1
                if uid not in self.retrying:  # one pending retry per object
                    self.retrying.add(uid)
                    delay = min(RETRY_SECONDS * 2 ** min(failures - 1, 16), MAX_RETRY_SECONDS)
                    asyncio.get_running_loop().call_later(delay, self._retry, uid)

    def _retry(self, uid: str) -> None:
        self.retrying.discard(uid)
        self._enqueue(uid)

    async def _process(self, node: Node) -> None:
        if node.orphaning:
            await self._orphan_dependents(node)
        else:
            await self._attempt_to_delete(node)

    # ---- orphan ----

    async def _orphan_dependents(self, owner: Node) -> None:
        for dependent in self._dependent_nodes(owner.uid):
            await self._update(dependent, lambda obj: _drop_owners(obj, {owner.uid}))
        await self._update(owner, lambda obj: _drop_finalizer(obj, ORPHAN))

    # ---- delete (attemptToDeleteItem) ----

    async def _attempt_to_delete(self, node: Node) -> None:
        if node.deleting and not node.deleting_dependents:
            return  # being deleted is a one-way trip; its dependents are looked at once it is gone
        latest = await self._get(node.resource, node.namespace, node.name)
        if latest is None or latest["metadata"].get("uid") != node.uid:
            return  # gone: its DELETED event enqueues its dependents
        if node.deleting_dependents:
            await self._process_deleting_dependents(node)
            return
        owners = latest["metadata"].get("ownerReferences") or []
        if not owners:
            return
        refs = await self._classify(node, owners)
        if refs.solid:
            if refs.dangling or refs.waiting:
                # The references to waiting owners go too, or those owners would wait forever.
                gone = {ref.get("uid") for ref in [*refs.dangling, *refs.waiting]}
                await self._update(node, lambda obj: _drop_owners(obj, gone))
        elif refs.waiting and (dependents := self._dependent_nodes(node.uid)):
            if any(dep.deleting_dependents for dep in dependents):
                # A dependent of this object waits for its dependents too: probably a cycle. Its owners
                # stop waiting for it, then it is deleted in foreground like any owner with dependents.
                await self._update(node, _unblock_owners)
            await self._delete(node, latest, "Foreground")
        else:
            finalizers = latest["metadata"].get("finalizers") or []
            policy = "Orphan" if ORPHAN in finalizers else "Foreground" if FOREGROUND in finalizers else "Background"
            await self._delete(node, latest, policy)

    async def _process_deleting_dependents(self, owner: Node) -> None:
        blocking = [dep for dep in self._dependent_nodes(owner.uid) if dep.blocks(owner.uid)]
        if not blocking:
            await self._update(owner, lambda obj: _drop_finalizer(obj, FOREGROUND))
            return
        for dependent in blocking:
            if not dependent.deleting_dependents:
                self._enqueue(dependent.uid)

    async def _classify(self, node: Node, owners: list[Object]) -> References:
        refs = References()
        for ref in owners:
            owner = await self._owner(node, ref)
            if owner is None:
                refs.dangling.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and FOREGROUND in (owner["metadata"].get("finalizers")
                                                                               or []):
                refs.waiting.append(ref)
            else:
                refs.solid.append(ref)
        return refs

    async def _owner(self, node: Node, ref: Object) -> Object | None:
        """The owner a reference names, or None when it is gone (isDangling)."""
        resource = self.by_kind.get((ref.get("apiVersion", ""), ref.get("kind", "")))
        if resource is None:  # not served (yet?): never collect on a guess; looked at again later
            raise LookupError(f"unable to get REST mapping for {ref.get('apiVersion')}/{ref.get('kind')}")
        if resource.namespaced and not node.namespace:
            raise NamespacedOwnerOfClusterScopedObject("cluster-scoped objects cannot refer to namespaced owners")
        owner = await self._get(resource, node.namespace, ref.get("name", ""))
        return owner if owner is not None and owner["metadata"].get("uid") == ref.get("uid") else None

    @staticmethod
    async def _get(resource: Resource, namespace: str, name: str) -> Object | None:
        try:
            return await resource.store.get(resource.context(namespace), name)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    # ---- writes ----

    async def _update(self, node: Node, change: Any) -> None:
        """Changes the object through the loopback client as long as it is the one the graph knows (its
        uid), read then written with the resourceVersion read (a conflict reads it again)."""
        api = node.resource.api(node.namespace)
        for attempt in range(1, UPDATE_ATTEMPTS + 1):
            try:
                live = await api.get(node.name)
                if live["metadata"].get("uid") != node.uid:
                    return
                await api.update(change(live))
                return
            except errors.StatusError as err:
                if err.code == 404:
                    return
                if err.code != 409 or attempt == UPDATE_ATTEMPTS:
                    raise

    async def _delete(self, node: Node, latest: Object, policy: str) -> None:
        """Deletes the object read as `latest`; when it changed since, still deletes it if its owner
        references did not (deleteObject's resourceVersion precondition and its retry)."""
        meta = latest["metadata"]
        api = node.resource.api(node.namespace)
        preconditions = {"uid": node.uid, "resourceVersion": meta.get("resourceVersion")}
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy,
                   "preconditions": preconditions}
        try:
            await api.delete(node.name, options)
        except errors.StatusError as err:
            if err.code == 404:
                return
            if err.code != 409:
                raise
            live = await self._get(node.resource, node.namespace, node.name)
            if live is None or live["metadata"].get("uid") != node.uid:
                return
            if live["metadata"].get("ownerReferences") != meta.get("ownerReferences"):
                raise  # its owners changed: looked at again
            del preconditions["resourceVersion"]
            await api.delete(node.name, options)
        log.info("garbage collector deleted %s %s/%s (%s)", node.resource.resource, node.namespace, node.name, policy)


def _drop_owners(obj: Object, uids: set[Any]) -> Object:
    meta = obj["metadata"]
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") not in uids]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return obj


def _unblock_owners(obj: Object) -> Object:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("blockOwnerDeletion"):
            ref["blockOwnerDeletion"] = False
    return obj


def _drop_finalizer(obj: Object, finalizer: str) -> Object:
    meta = obj["metadata"]
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
    if not meta["finalizers"]:
        del meta["finalizers"]
    return obj
