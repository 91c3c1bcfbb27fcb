"""The podgc controller (pkg/controller/podgc, v1.34). Every gc period it force-deletes (grace period
0) the oldest terminated pods beyond --terminated-pod-gc-threshold (evicted ones first); terminating
pods on a node that is not ready and tainted node.kubernetes.io/out-of-service; pods bound to a node
that no longer exists (once it has been missing for the quarantine time and a fresh read confirms it is
gone); and terminating pods never scheduled to a node. A pod not yet terminal is first marked Failed,
an orphaned one with the DisruptionTarget condition (reason DeletionByPodGC)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import monotonic, wall_now
from ..client.informers import SharedInformerFactory
from ..client.rest import STRATEGIC_MERGE_PATCH, Client
from .controller_utils import parse_time, pod_phase
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]

DEFAULT_TERMINATED_POD_GC_THRESHOLD = 12500
GC_CHECK_PERIOD = 20.0
QUARANTINE_TIME = 40.0  # how long a node must have been missing before its pods are orphans
MAX_DELETES_PER_PASS = 500
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"  # bounds one pass; the rest go next period
ORPHAN_CONDITION = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "DeletionByPodGC",
    "message": "PodGC: node no longer exists",
}


def is_terminated(pod: Object) -> bool:
    return pod_phase(pod) in ("Succeeded", "Failed")


def is_evicted(pod: Object) -> bool:
    return pod_phase(pod) == "Failed" and (pod.get("status") or {}).get("reason") == "Evicted"


def _eviction_and_creation_order(pod: Object) -> tuple[bool, float, str]:
    """byEvictionAndCreationTimestamp: evicted pods first, then the oldest, then by name."""
    meta = pod["metadata"]
    return not is_evicted(pod), parse_time(meta.get("creationTimestamp")) or 0.0, meta.get("name", "")


def _out_of_service(node: Object) -> bool:
    """Not Ready and tainted node.kubernetes.io/out-of-service: its terminating pods will not finish."""
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or ()
    )
    taints = (node.get("spec") or {}).get("taints") or ()
    return not ready and any(t.get("key") == OUT_OF_SERVICE_TAINT for t in taints)


class PodGCController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        terminated_pod_gc_threshold: int = DEFAULT_TERMINATED_POD_GC_THRESHOLD,
        gc_check_period: float = GC_CHECK_PERIOD,
        quarantine_time: float = QUARANTINE_TIME,
        clock: Callable[[], float] = monotonic,
    ):
        """`terminated_pod_gc_threshold` <= 0 turns the collection of terminated pods off."""
        super().__init__("podgc", client, None, 0)  # no workers: the collection runs on a period
        self.threshold = terminated_pod_gc_threshold
        self.period = gc_check_period
        self.quarantine = quarantine_time
        self.clock = clock
        self.pods = informers.for_resource("", "v1", "pods")
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.informers = (self.pods, self.nodes)
        self.missing_since: dict[str, float] = {}  # node name -> when its pods were first seen without it

    def register_handlers(self) -> None:
        pass

    def worker_syncs(self) -> list[Callable[[], Any]]:
        return [self._run]

    async def _run(self) -> None:
        while not self.queue.shutting_down:
            try:
                await self.gc()
            except Exception as err:  # noqa: BLE001 - the next period tries again, as wait.Until
                log.info("podgc: %s", err)
            await asyncio.sleep(self.period)

    async def gc(self) -> None:
        """One pass: terminated pods over the threshold, orphaned pods, unscheduled terminating pods."""
        pods = self.pods.indexer.list()
        node_objects = self.nodes.indexer.list()
        nodes = {n["metadata"]["name"] for n in node_objects}
        if self.threshold > 0:
            await self._gc_terminated(pods)
        await self._gc_terminating(pods, {n["metadata"]["name"] for n in node_objects if _out_of_service(n)})
        await self._gc_orphaned(pods, nodes)
        await self._gc_unscheduled_terminating(pods)

    async def _gc_terminated(self, pods: list[Object]) -> None:
        terminated = [p for p in pods if is_terminated(p)]
        excess = len(terminated) - self.threshold
        if excess <= 0:
            return
        log.info("Garbage collecting %d terminated pods", excess)
        terminated.sort(key=_eviction_and_creation_order)
        await self._delete_all(terminated[: min(excess, MAX_DELETES_PER_PASS)], None)

    async def _gc_terminating(self, pods: list[Object], out_of_service: set[str]) -> None:
        """gcTerminating: terminating pods on a node that is not ready and tainted out-of-service."""
        doomed = [
            p
            for p in pods
            if p["metadata"].get("deletionTimestamp")
            and (p.get("spec") or {}).get("nodeName") in out_of_service
        ]
        doomed.sort(key=_eviction_and_creation_order)
        await self._delete_all(doomed[:MAX_DELETES_PER_PASS], None)

    async def _gc_orphaned(self, pods: list[Object], nodes: set[str]) -> None:
        now = self.clock()
        missing = {(p.get("spec") or {}).get("nodeName") for p in pods} - nodes - {None, ""}
        self.missing_since = {n: self.missing_since.get(n, now) for n in missing}
        deleted = set()
        for node in missing:
            if now - self.missing_since[node] >= self.quarantine and not await self._node_exists(node):
                deleted.add(node)
        orphans = [p for p in pods if (p.get("spec") or {}).get("nodeName") in deleted]
        for pod in orphans:
            log.info(
                "Found orphaned Pod %s assigned to the Node %s, deleting",
                pod["metadata"].get("name"),
                pod["spec"]["nodeName"],
            )
        await self._delete_all(orphans[:MAX_DELETES_PER_PASS], ORPHAN_CONDITION)

    async def _node_exists(self, name: str) -> bool:
        """checkIfNodeExists: a fresh read, not the informer's (which may lag)."""
        try:
            await self.client.resource("", "v1", "nodes").get(name)
        except errors.StatusError as err:
            if err.code == 404:
                return False
            raise
        return True

    async def _gc_unscheduled_terminating(self, pods: list[Object]) -> None:
        doomed = [
            p
            for p in pods
            if p["metadata"].get("deletionTimestamp") and not (p.get("spec") or {}).get("nodeName")
        ]
        await self._delete_all(doomed[:MAX_DELETES_PER_PASS], None)

    async def _delete_all(self, pods: list[Object], condition: Object | None) -> None:
        results = await asyncio.gather(
            *(self._mark_failed_and_delete(p, condition) for p in pods), return_exceptions=True
        )
        for pod, result in zip(pods, results, strict=True):
            if isinstance(result, BaseException):
                log.info("podgc: deleting pod %s: %s", pod["metadata"].get("name"), result)

    async def _mark_failed_and_delete(self, pod: Object, condition: Object | None) -> None:
        """markFailedAndDeletePodWithCondition: a pod not yet terminal is marked Failed (with the condition),
        then force-deleted."""
        meta = pod["metadata"]
        api = self.client.resource("", "v1", "pods").namespace(meta.get("namespace", ""))
        try:
            if not is_terminated(pod):
                status: Object = {"phase": "Failed"}
                if condition is not None:
                    stamp = wall_now().strftime("%Y-%m-%dT%H:%M:%SZ")
                    status["conditions"] = [{**condition, "lastTransitionTime": stamp}]
                await api.patch(
                    meta["name"],
                    {"metadata": {"uid": meta.get("uid")}, "status": status},
                    STRATEGIC_MERGE_PATCH,
                    subresource="status",
                )
            await api.delete(
                meta["name"], {"gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid")}}
            )
        except errors.StatusError as err:
            if err.code not in (404, 409):
                raise
