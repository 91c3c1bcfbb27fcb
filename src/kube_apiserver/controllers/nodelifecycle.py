"""The node lifecycle controller (pkg/controller/nodelifecycle) and the taint eviction controller
(pkg/controller/tainteviction, kube-controller-manager's taint-eviction-controller).

nodelifecycle watches each node's heartbeats (its Lease in kube-node-lease and its Ready condition's
lastHeartbeatTime, timed by this controller's own clock): a node not heard from within the grace period gets
its Ready, MemoryPressure, DiskPressure and PIDPressure conditions Unknown ("Kubelet stopped posting node
status."), its pods' Ready condition False, and the taint node.kubernetes.io/unreachable:NoExecute
(not-ready when Ready is False); the NoSchedule taints follow the conditions (TaintNodesByCondition). When
every node is down (full disruption) it evicts nothing: the NoExecute taints are taken off. Taints go as
soon as the node is Ready again. Evictions are not rate limited per zone (--node-eviction-rate).

taint-eviction-controller deletes the pods on a node with a NoExecute taint they do not tolerate, at once,
or after the least tolerationSeconds of the tolerations that match (300 s from DefaultTolerationSeconds
admission), with the DisruptionTarget condition set first."""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..api.core.scheduling_helpers import tolerates
from ..apimachinery import errors
from ..apimachinery.clock import wall_time
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.record import EventRecorder
from ..client.rest import Client
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
NODE_LEASE_NAMESPACE = "kube-node-lease"
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
NO_EXECUTE, NO_SCHEDULE = "NoExecute", "NoSchedule"
# nodeConditionToTaintKeyStatusMap: which condition status means which NoSchedule taint.
CONDITION_TAINTS = {
    "Ready": {"False": NOT_READY, "Unknown": UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
CONDITION_TAINT_KEYS = frozenset(key for keys in CONDITION_TAINTS.values() for key in keys.values())
MONITORED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
DEFAULT_MONITOR_PERIOD = 5.0  # --node-monitor-period
DEFAULT_STARTUP_GRACE_PERIOD = 60.0  # --node-startup-grace-period
NODE_LIFECYCLE_COMPONENT = "node-controller"
TAINT_EVICTION_COMPONENT = "taint-eviction-controller"


def rfc3339(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def _conditions(node: Object) -> dict[str, Object]:
    return {c.get("type", ""): c for c in (node.get("status") or {}).get("conditions") or []}


def _ready_status(node: Object) -> str:
    return (_conditions(node).get("Ready") or {}).get("status") or "Unknown"


def _taints(node: Object) -> list[Object]:
    return list((node.get("spec") or {}).get("taints") or [])


def _node_ref(node: Object) -> Object:
    meta = node.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": meta.get("name", ""), "uid": meta.get("uid", "")},
    }


@dataclass
class NodeHealth:
    """What was last heard from a node (nodeHealthData): the Ready condition's heartbeat, the Lease's renew
    time, and when either last moved by this controller's clock."""

    heartbeat: str | None
    renew_time: str | None
    probe: float


class NodeLifecycleController(QueueController):
    name = "nodelifecycle"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        grace_period: float = 50.0,
        monitor_period: float = DEFAULT_MONITOR_PERIOD,
        startup_grace_period: float = DEFAULT_STARTUP_GRACE_PERIOD,
        workers: int = 1,
        clock: Callable[[], float] = wall_time,
    ):
        # Its queue: nodes whose NoSchedule taints to check.
        super().__init__(self.name, client, recorder, workers)
        self.grace_period = grace_period
        self.monitor_period = monitor_period
        self.startup_grace_period = max(startup_grace_period, grace_period)
        self.clock = clock
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.pods = informers.for_resource("", "v1", "pods")
        self.leases = informers.for_resource("coordination.k8s.io", "v1", "leases")
        self.informers = (self.nodes, self.pods, self.leases)
        self.health: dict[str, NodeHealth] = {}

    def register_handlers(self) -> None:
        self.nodes.add_event_handler(
            EventHandler(
                lambda node: self.queue.add(object_key(node)),
                lambda old, new: self.queue.add(object_key(new)),
                lambda node: self.health.pop(object_key(node), None),
            )
        )

    def worker_syncs(self) -> Sequence[Callable[[], Awaitable[None]]]:
        return [*super().worker_syncs(), self._monitor]

    async def _monitor(self) -> None:
        while True:
            try:
                await self.monitor_node_health()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the next pass tries again
                log.exception("nodelifecycle: monitoring node health failed")
            await asyncio.sleep(self.monitor_period)

    # ---- TaintNodesByCondition ----

    async def sync_handler(self, key: str) -> None:
        """doNoScheduleTaintingPass: the node's NoSchedule taints are those its conditions call for."""
        node = self.nodes.indexer.get(key)
        if node is None:
            return
        conditions = _conditions(node)
        wanted = []
        for kind, keys in CONDITION_TAINTS.items():
            taint_key = keys.get((conditions.get(kind) or {}).get("status") or "")
            if taint_key:
                wanted.append({"key": taint_key, "effect": NO_SCHEDULE})
        if (node.get("spec") or {}).get("unschedulable"):
            wanted.append({"key": UNSCHEDULABLE, "effect": NO_SCHEDULE})
        managed = CONDITION_TAINT_KEYS | {UNSCHEDULABLE}
        current = [t for t in _taints(node) if t.get("effect") == NO_SCHEDULE and t.get("key") in managed]
        if {t["key"] for t in current} == {t["key"] for t in wanted}:
            return
        kept = [t for t in _taints(node) if not (t.get("effect") == NO_SCHEDULE and t.get("key") in managed)]
        ours = [next((t for t in current if t.get("key") == w["key"]), w) for w in wanted]
        await self._set_taints(node, kept + ours)

    async def _set_taints(self, node: Object, taints: list[Object]) -> None:
        meta = node["metadata"]
        patch = {
            "metadata": {"resourceVersion": meta.get("resourceVersion")},
            "spec": {"taints": taints or None},
        }
        try:
            await self.client.resource("", "v1", "nodes").patch(meta["name"], patch)
        except errors.StatusError as err:
            if err.code != 404:
                raise

    # ---- monitorNodeHealth ----

    async def monitor_node_health(self) -> None:
        nodes = [copy.deepcopy(n) for n in self.nodes.indexer.list()]
        ready: dict[str, str] = {}
        for node in nodes:
            name = node["metadata"]["name"]
            try:
                observed, current = await self._try_update_node_health(node)
            except errors.StatusError as err:
                log.info("nodelifecycle: updating the health of node %s failed: %s", name, err.message)
                continue
            ready[name] = current
            if observed == "True" and current != "True":
                self.recorder.eventf(
                    _node_ref(node),
                    "Normal",
                    "NodeNotReady",
                    "Node %s status is now: %s",
                    name,
                    "NodeNotReady",
                )
                await self._mark_pods_not_ready(name)
        # Every node down (no zones here: one zone) is a full disruption: the cluster's own network or
        # control plane is more likely at fault than every node, so nothing is evicted.
        full_disruption = bool(ready) and all(status != "True" for status in ready.values())
        for node in nodes:
            status = ready.get(node["metadata"]["name"])
            if status is not None:
                await self._process_taint_based_eviction(
                    self.nodes.indexer.get(object_key(node)) or node, status, full_disruption
                )

    async def _try_update_node_health(self, node: Object) -> tuple[str, str]:
        """tryUpdateNodeHealth: the Ready status observed, and the one after marking a silent node Unknown."""
        name = node["metadata"]["name"]
        now = self.clock()
        conditions = _conditions(node)
        ready = conditions.get("Ready")
        heartbeat = (ready or {}).get("lastHeartbeatTime")
        lease = self.leases.indexer.get_by_name(NODE_LEASE_NAMESPACE, name)
        renew_time = ((lease or {}).get("spec") or {}).get("renewTime")
        health = self.health.get(name)
        if health is None:  # a node added: RecordNodeEvent's RegisteredNode
            health = self.health[name] = NodeHealth(heartbeat, renew_time, now)
            self.recorder.eventf(
                _node_ref(node),
                "Normal",
                "RegisteredNode",
                "Node %s event: %s",
                name,
                f"Registered Node {name} in Controller",
            )
        if heartbeat != health.heartbeat:
            health.heartbeat, health.probe = heartbeat, now
        if renew_time and renew_time != health.renew_time:
            health.renew_time, health.probe = renew_time, now
        observed = (ready or {}).get("status") or "Unknown"
        grace = self.grace_period if ready is not None else self.startup_grace_period
        if now <= health.probe + grace:
            return observed, observed
        changed = False
        for kind in MONITORED_CONDITIONS:
            condition = conditions.get(kind)
            if condition is None:
                node.setdefault("status", {}).setdefault("conditions", []).append(
                    {
                        "type": kind,
                        "status": "Unknown",
                        "reason": "NodeStatusNeverUpdated",
                        "message": "Kubelet never posted node status.",
                        "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                        "lastTransitionTime": rfc3339(now),
                    }
                )
                changed = True
            elif condition.get("status") != "Unknown":
                condition.update(
                    status="Unknown",
                    reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.",
                    lastTransitionTime=rfc3339(now),
                )
                changed = True
        if changed:
            patch = {
                "metadata": {"resourceVersion": node["metadata"].get("resourceVersion")},
                "status": {"conditions": node["status"]["conditions"]},
            }
            await self.client.resource("", "v1", "nodes").patch(name, patch, subresource="status")
        return observed, "Unknown"

    def _pods_on(self, node_name: str) -> list[Object]:
        return [p for p in self.pods.indexer.list() if (p.get("spec") or {}).get("nodeName") == node_name]

    async def _mark_pods_not_ready(self, node_name: str) -> None:
        """MarkPodsNotReady: each pod's Ready condition False, with the NodeNotReady event."""
        now = rfc3339(self.clock())
        for pod in self._pods_on(node_name):
            conditions = copy.deepcopy((pod.get("status") or {}).get("conditions") or [])
            ready = next((c for c in conditions if c.get("type") == "Ready"), None)
            if ready is None or ready.get("status") == "False":
                continue
            ready.update(status="False", lastTransitionTime=now)
            meta = pod["metadata"]
            pods = self.client.resource("", "v1", "pods").namespace(meta.get("namespace", ""))
            try:
                await pods.patch(
                    meta["name"],
                    {
                        "metadata": {"resourceVersion": meta.get("resourceVersion")},
                        "status": {"conditions": conditions},
                    },
                    subresource="status",
                )
            except errors.StatusError as err:
                if err.code in (404, 409):
                    continue  # gone, or changed meanwhile (the next pass looks again)
                raise
            self.recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready")

    async def _process_taint_based_eviction(self, node: Object, ready: str, full_disruption: bool) -> None:
        """processTaintBaseEviction: unreachable (Unknown) or not-ready (False) NoExecute taint, none when
        Ready or when the whole cluster is down."""
        wanted = (
            None if ready == "True" or full_disruption else (UNREACHABLE if ready == "Unknown" else NOT_READY)
        )
        taints = _taints(node)
        ours = [
            t for t in taints if t.get("effect") == NO_EXECUTE and t.get("key") in (NOT_READY, UNREACHABLE)
        ]
        if [t.get("key") for t in ours] == ([wanted] if wanted else []):
            return
        kept = [t for t in taints if t not in ours]
        if wanted:
            kept.append({"key": wanted, "effect": NO_EXECUTE, "timeAdded": rfc3339(self.clock())})
        await self._set_taints(node, kept)


class TaintEvictionController(QueueController):
    """NoExecuteTaintManager: pods on a node with a NoExecute taint they do not tolerate are deleted; those
    tolerating it for tolerationSeconds are deleted that long after the taint was seen."""

    name = "taint-eviction-controller"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        workers: int = 2,
        clock: Callable[[], float] = wall_time,
    ):
        super().__init__(self.name, client, recorder, workers)  # its queue: (namespace, name) of pods
        self.clock = clock
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.pods = informers.for_resource("", "v1", "pods")
        self.informers = (self.nodes, self.pods)
        self.pods_by_node: dict[str, set[str]] = {}
        self.scheduled: dict[str, tuple[float, float]] = {}  # pod key -> (since, deletion time)

    def register_handlers(self) -> None:
        self.nodes.add_event_handler(EventHandler(self._node_added, self._node_updated))
        self.pods.add_event_handler(
            EventHandler(self._pod_added, lambda old, new: self._pod_added(new), self._pod_deleted)
        )

    def _node_added(self, node: Object) -> None:
        if any(t.get("effect") == NO_EXECUTE for t in _taints(node)):
            self.queue.add(("node", object_key(node)))

    def _node_updated(self, old: Object, new: Object) -> None:
        if _no_execute(old) != _no_execute(new):
            self.queue.add(("node", object_key(new)))

    def _pod_added(self, pod: Object) -> None:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            key = object_key(pod)
            self.pods_by_node.setdefault(node, set()).add(key)
            self.queue.add(("pod", key))

    def _pod_deleted(self, pod: Object) -> None:
        key = object_key(pod)
        self.scheduled.pop(key, None)
        keys = self.pods_by_node.get((pod.get("spec") or {}).get("nodeName") or "")
        if keys is not None:
            keys.discard(key)

    async def sync_handler(self, item: tuple[str, str]) -> None:
        kind, key = item
        if kind == "node":
            node = self.nodes.indexer.get(key)
            for pod_key in list(self.pods_by_node.get(key, ())):
                await self._process_pod(pod_key, node)
            return
        pod = self.pods.indexer.get(key)
        if pod is None:
            return
        node = self.nodes.indexer.get((pod.get("spec") or {}).get("nodeName") or "")
        if kind == "evict":
            await self._evict_if_due(key, pod, node)
        else:
            await self._process_pod(key, node)

    async def _process_pod(self, key: str, node: Object | None) -> None:
        """processPodOnNode."""
        pod = self.pods.indexer.get(key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        taints = _no_execute(node or {})
        if not taints:
            self._cancel(key, pod)
            return
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        used = []
        for taint in taints:
            matching = [t for t in tolerations if tolerates(t, taint)]
            if not matching:
                self._schedule(key, pod, 0.0, at_once=True)
                return
            used.extend(matching)
        seconds = _min_toleration_seconds(used)
        if seconds is None:
            self._cancel(key, pod)
            return
        self._schedule(key, pod, seconds)

    def _schedule(self, key: str, pod: Object, seconds: float, at_once: bool = False) -> None:
        """An eviction `seconds` from now; one already scheduled earlier stands, unless the pod must go at
        once (a taint it does not tolerate): then that one is cancelled first."""
        now = self.clock()
        previous = self.scheduled.get(key)
        if previous is not None:
            if not at_once and previous[0] < now:
                return
            self._cancel(key, pod)
        self.scheduled[key] = (now, now + seconds)
        self.queue.add_after(("evict", key), seconds)

    def _cancel(self, key: str, pod: Object) -> None:
        if self.scheduled.pop(key, None) is not None:
            self.recorder.eventf(pod, "Normal", "TaintManagerEviction", "Cancelling deletion of Pod %s", key)

    async def _evict_if_due(self, key: str, pod: Object, node: Object | None) -> None:
        scheduled = self.scheduled.get(key)
        if scheduled is None:
            return
        now = self.clock()
        if now < scheduled[1]:
            self.queue.add_after(("evict", key), scheduled[1] - now)
            return
        del self.scheduled[key]
        self.recorder.eventf(pod, "Normal", "TaintManagerEviction", "Marking for deletion Pod %s", key)
        await self._add_condition_and_delete(pod)

    async def _add_condition_and_delete(self, pod: Object) -> None:
        """addConditionAndDeletePod: the DisruptionTarget condition says why, then the pod is deleted."""
        meta = pod["metadata"]
        pods = self.client.resource("", "v1", "pods").namespace(meta.get("namespace", ""))
        conditions = [
            c
            for c in (pod.get("status") or {}).get("conditions") or []
            if c.get("type") != "DisruptionTarget"
        ]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": rfc3339(self.clock()),
            }
        )
        try:
            await pods.patch(meta["name"], {"status": {"conditions": conditions}}, subresource="status")
            await pods.delete(meta["name"], {"preconditions": {"uid": meta.get("uid")}})
        except errors.StatusError as err:
            if err.code not in (404, 409):
                raise


def _no_execute(node: Object) -> list[Object]:
    return [t for t in _taints(node) if t.get("effect") == NO_EXECUTE]


def _min_toleration_seconds(tolerations: list[Object]) -> float | None:
    """getMinTolerationTime: the least tolerationSeconds (0 when one is not positive); None when none sets
    any (tolerated for ever)."""
    seconds = [t["tolerationSeconds"] for t in tolerations if isinstance(t.get("tolerationSeconds"), int)]
    if not seconds:
        return None
    return float(max(0, min(seconds)))
