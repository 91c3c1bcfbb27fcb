"""The namespace controller (k8s pkg/controller/namespace/deletion): a namespace being deleted is emptied
of every namespaced resource discovery lists (built-in, custom and aggregated alike: each collection is
deleted, or each object when deletecollection is not a verb, then listed again), its status conditions
say how that went, and once nothing remains and nothing failed the `kubernetes` finalizer is removed
through /finalize, which completes the deletion. Otherwise the namespace is synced again shortly."""

from __future__ import annotations

import asyncio
import copy
import datetime
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import wall_now
from ..apimachinery.meta import now_rfc3339
from .discovery import DiscoveredResource, ServerResources
from .informer import RETRY_SECONDS, Informer, InformerController, Resource

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
FINALIZER = "kubernetes"
# The wait assumed for objects held by finalizers (finalizerEstimateSeconds).
FINALIZER_ESTIMATE_SECONDS = 15
# The conditions the deleter owns, in upstream's order, with the reason and message of their "ok" form.
CONDITIONS = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions",
                                                    "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("ContentDeleted",
                                        "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentRemoved", "All content successfully removed"),
}


@dataclass
class Content:
    """What one pass over the namespace's content found (deleteAllContent's totals)."""

    estimate: int = 0  # seconds to wait before expecting the remaining objects gone
    remaining: dict[str, int] = field(default_factory=dict)  # "resource.group" -> objects left
    finalizers: Counter[str] = field(default_factory=Counter)  # finalizer -> objects it holds
    discovery_error: str = ""
    failed_groups: int = 0
    errors: list[str] = field(default_factory=list)

    def conditions(self) -> dict[str, tuple[str, str]]:
        """The failing conditions: type -> (reason, message) (namespaceConditionUpdater)."""
        out: dict[str, tuple[str, str]] = {}
        if self.discovery_error:
            out["NamespaceDeletionDiscoveryFailure"] = (
                "DiscoveryFailed", f"Discovery failed for some groups, {self.failed_groups} failing: "
                                   f"{self.discovery_error}")
        if self.errors:
            out["NamespaceDeletionContentFailure"] = (
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(self.errors)} remaining: {', '.join(sorted(self.errors))}")
        if self.remaining:
            listed = sorted(f"{resource} has {count} resource instances" for resource, count in self.remaining.items())
            out["NamespaceContentRemaining"] = ("SomeResourcesRemain",
                                               f"Some resources are remaining: {', '.join(listed)}")
        if self.finalizers:
            listed = sorted(f"{name} in {count} resource instances" for name, count in self.finalizers.items())
            out["NamespaceFinalizersRemaining"] = ("SomeFinalizerRemain",
                                                   f"Some finalizers are remaining: {', '.join(listed)}")
        return out


class NamespaceController(InformerController):
    name = "namespace"

    def __init__(self, namespaces: Resource, discovery: ServerResources):
        self.namespaces = namespaces  # conditions and finalizers are written through its loopback client
        self.discovery = discovery
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.queued: set[str] = set()  # a namespace waits in the queue once, as in a workqueue
        self.retrying: set[str] = set()  # and has one retry pending at most
        self.informers = [Informer(namespaces, self._observe)]

    async def _observe(self, resource: Resource, event_type: str, obj: Object) -> None:
        meta = obj["metadata"]
        if event_type != "DELETED" and meta.get("deletionTimestamp") and \
                FINALIZER in ((obj.get("spec") or {}).get("finalizers") or []):
            self._enqueue(meta["name"])

    def _enqueue(self, name: str) -> None:
        if name not in self.queued:
            self.queued.add(name)
            self.queue.put_nowait(name)

    async def _work(self) -> None:
        """InformerController's loop, with one entry and one pending retry per namespace: the status writes
        of a sync (events of their own) do not start parallel chains of retries of the same namespace."""
        while True:
            name = await self.queue.get()
            self.queued.discard(name)
            try:
                done = await self.sync(name)
            except Exception as err:  # noqa: BLE001 - retried shortly
                log.info("namespace controller: %s: %s", name, err)
                done = False
            if not done and name not in self.retrying:
                self.retrying.add(name)
                asyncio.get_running_loop().call_later(RETRY_SECONDS, self._retry, name)

    def _retry(self, name: str) -> None:
        self.retrying.discard(name)
        self._enqueue(name)

    async def sync(self, name: str) -> bool:
        """Deletes what is left in the namespace; finalizes it when nothing is. Whether it is done."""
        try:
            ns = await self.namespaces.store.get(self.namespaces.context(), name)
        except errors.StatusError as err:
            if err.code == 404:
                return True
            raise
        deleted_at = ns["metadata"].get("deletionTimestamp")
        if not deleted_at or FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return True
        content = await self._delete_all_content(name, deleted_at)
        await self._set_conditions(name, content.conditions())
        if content.discovery_error or content.errors or content.estimate > 0:
            return False
        await self._finalize(name)
        return True

    # ---- deleteAllContent ----

    async def _delete_all_content(self, namespace: str, deleted_at: str) -> Content:
        discovered = self.discovery.preferred_namespaced()
        content = Content(discovery_error=discovered.error(), failed_groups=len(discovered.failed))
        for resource in discovered.resources:
            if "delete" not in resource.verbs:
                continue
            try:
                await self._delete_resource(resource, namespace, deleted_at, content)
            except errors.StatusError as err:
                content.errors.append(err.message)
            except Exception as err:  # noqa: BLE001 - one resource failing must not stop the others
                content.errors.append(str(err) or type(err).__name__)
        return content

    async def _delete_resource(self, resource: DiscoveredResource, namespace: str, deleted_at: str,
                               content: Content) -> None:
        """deleteAllContentForGroupVersionResource: delete, list what is left, say why it is left."""
        estimate = await self._estimate(resource, namespace, deleted_at)
        content.estimate = max(content.estimate, estimate)
        client = resource.client
        if "deletecollection" in resource.verbs:
            await _ignore_unsupported(client.delete_collection(namespace))
        elif "list" in resource.verbs:
            for item in await client.list(namespace):
                await _ignore_unsupported(client.delete(namespace, item["metadata"]["name"]))
        if "list" not in resource.verbs:
            return
        left = await client.list(namespace)
        if not left:
            return
        content.remaining[f"{resource.resource}.{resource.group}"] = len(left)
        held = Counter(f for item in left for f in item["metadata"].get("finalizers") or [])
        content.finalizers.update(held)
        if estimate == 0 and held:
            content.estimate = max(content.estimate, FINALIZER_ESTIMATE_SECONDS)
        elif estimate == 0:
            raise RuntimeError(f"unexpected items still remain in namespace: {namespace} for gvr: {resource.gvr()}")

    async def _estimate(self, resource: DiscoveredResource, namespace: str, deleted_at: str) -> int:
        """Pods still terminating: their longest grace period, unless that much time has passed since the
        namespace's deletion (estimateGracefulTerminationForPods)."""
        if (resource.group, resource.resource) != ("", "pods"):
            return 0
        estimate = 0
        for pod in await resource.client.list(namespace):
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            estimate = max(estimate, (pod.get("spec") or {}).get("terminationGracePeriodSeconds") or 0)
        return 0 if _seconds_since(deleted_at) >= estimate else estimate

    # ---- status and finalize ----

    async def _set_conditions(self, name: str, failing: dict[str, tuple[str, str]]) -> None:
        """Every condition the deleter owns, failing or ok; written only when one changes (updateConditions),
        through the loopback client with the resourceVersion read (a conflict waits for the next pass)."""
        ns = await self.namespaces.store.get(self.namespaces.context(), name)
        if _conditions_hold(ns, failing):
            return
        try:
            await self.namespaces.api().update_status(_with_conditions(copy.deepcopy(ns), failing, now_rfc3339()))
        except errors.StatusError as err:
            log.info("couldn't update status condition for namespace %q: %s", name, err.message)

    async def _finalize(self, name: str) -> None:
        """The kubernetes finalizer removed through namespaces/finalize (a conflict retries the namespace)."""
        api = self.namespaces.api()
        try:
            ns = await api.get(name)
            finalizers = [f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != FINALIZER]
            ns.setdefault("spec", {})["finalizers"] = finalizers
            await api.update(ns, "finalize")
            log.info("namespace controller finalized namespace %s", name)
        except errors.StatusError as err:
            if err.code != 404:
                raise


def _with_conditions(ns: Object, failing: dict[str, tuple[str, str]], now: str) -> Object:
    conditions = ns.setdefault("status", {}).setdefault("conditions", [])
    for kind, ok in CONDITIONS.items():
        status = "True" if kind in failing else "False"
        reason, message = failing.get(kind, ok)
        old = next((c for c in conditions if c.get("type") == kind), None)
        if old is None:
            conditions.append({"type": kind, "status": status, "lastTransitionTime": now,
                               "reason": reason, "message": message})
            continue
        if old.get("status") != status:
            old["lastTransitionTime"] = now
        old.update(status=status, reason=reason, message=message)
    return ns


def _conditions_hold(ns: Object, failing: dict[str, tuple[str, str]]) -> bool:
    conditions = {c.get("type"): c for c in (ns.get("status") or {}).get("conditions") or []}
    for kind, ok in CONDITIONS.items():
        reason, message = failing.get(kind, ok)
        old = conditions.get(kind)
        status = "True" if kind in failing else "False"
        if old is None or (old.get("status"), old.get("reason"), old.get("message")) != (status, reason, message):
            return False
    return True


async def _ignore_unsupported(call: Any) -> None:
    """NotFound and MethodNotSupported mean the operation is not served: not an error (upstream's
    special case for resources listed without those verbs)."""
    try:
        await call
    except errors.StatusError as err:
        if err.code not in (404, 405):
            raise


def _seconds_since(timestamp: str) -> float:
    try:
        then = datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return float("inf")
    return (wall_now() - then).total_seconds()
