"""The replicaset and replicationcontroller controllers (pkg/controller/replicaset; the replication
controller is the same controller over ReplicationControllers): each keeps `spec.replicas` active pods
matching its selector, adopting orphans and releasing strays, creating in slow-start batches and deleting
the pods ActivePodsWithRanks puts first, and writes `status` (replicas, fullyLabeledReplicas,
readyReplicas, availableReplicas, observedGeneration, the ReplicaFailure condition).

It acts on a key only once its informers have seen the creates and deletes it made last time (the
expectations), so a slow informer never makes it create twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import wall_time
from ..apimachinery.labels import (
    Selector,
    SelectorParseError,
    selector_from_label_selector,
    selector_from_set,
)
from ..apimachinery.meta import now_rfc3339
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.record import EventRecorder
from ..client.rest import Client
from .controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from .controller_utils import (
    PodControl,
    UIDTrackingControllerExpectations,
    controller_of,
    controllers_selecting,
    filter_active_pods,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    new_controller_ref,
    rank_pods_for_deletion,
    slow_start_batch,
)
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
BURST_REPLICAS = 500  # creates or deletes per sync at most
STATUS_UPDATE_RETRIES = 1
REPLICA_FAILURE = "ReplicaFailure"


@dataclass(frozen=True)
class ReplicaKind:
    """What differs between ReplicaSets and ReplicationControllers."""

    group: str
    version: str
    resource: str
    kind: str
    component: str  # the Events' source
    selector: Callable[[Object], Selector]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _label_selector(obj: Object) -> Selector:
    return selector_from_label_selector((obj.get("spec") or {}).get("selector"))


def _map_selector(obj: Object) -> Selector:
    return selector_from_set((obj.get("spec") or {}).get("selector") or {})


REPLICA_SETS = ReplicaKind("apps", "v1", "replicasets", "ReplicaSet", "replicaset-controller", _label_selector)
REPLICATION_CONTROLLERS = ReplicaKind("", "v1", "replicationcontrollers", "ReplicationController",
                                      "replication-controller", _map_selector)


def _replicas(rs: Object) -> int:
    replicas = (rs.get("spec") or {}).get("replicas")
    return 1 if replicas is None else int(replicas)


class ReplicaSetController(QueueController):
    def __init__(self, kind: ReplicaKind, client: Client, informers: SharedInformerFactory, recorder: EventRecorder,
                 workers: int = 5, clock: Callable[[], float] = wall_time):
        self.kind = kind
        name = "replicaset" if kind is REPLICA_SETS else "replicationcontroller"
        super().__init__(name, client, recorder, workers)
        self.clock = clock
        self.sets = informers.for_resource(kind.group, kind.version, kind.resource)
        self.pods = informers.for_resource("", "v1", "pods")
        self.expectations = UIDTrackingControllerExpectations()
        self.pod_control = PodControl(lambda ns: client.resource("", "v1", "pods").namespace(ns), recorder)
        self.informers = (self.sets, self.pods)

    # ---- lifecycle ----

    def register_handlers(self) -> None:
        self.sets.add_event_handler(EventHandler(self._add_set, self._update_set, self._delete_set))
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._delete_pod))

    # ---- informer handlers ----

    def _add_set(self, rs: Object) -> None:
        self.queue.add(object_key(rs))

    def _update_set(self, old: Object, new: Object) -> None:
        if old["metadata"].get("uid") != new["metadata"].get("uid"):
            self._delete_set(old)
        self.queue.add(object_key(new))

    def _delete_set(self, rs: Object) -> None:
        key = object_key(rs)
        self.expectations.delete(key)
        self.queue.add(key)

    def _resolve(self, namespace: str, ref: Object) -> Object | None:
        """The controller a pod's controllerRef names, if it is one of ours and still the same object."""
        if ref.get("kind") != self.kind.kind:
            return None
        rs = self.sets.indexer.get_by_name(namespace, ref.get("name", ""))
        if rs is None or rs["metadata"].get("uid") != ref.get("uid"):
            return None
        return rs

    def _selecting(self, pod: Object) -> list[Object]:
        """GetPodReplicaSets: the controllers in the pod's namespace whose selector matches it."""
        return controllers_selecting(pod, self.sets.indexer.list(pod["metadata"].get("namespace", "")),
                                     self.kind.selector)

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod)  # a restarted controller sees a pod being deleted as an add
            return
        ref = controller_of(pod)
        if ref is not None:
            rs = self._resolve(pod["metadata"].get("namespace", ""), ref)
            if rs is not None:
                key = object_key(rs)
                self.expectations.creation_observed(key)
                self.queue.add(key)
            return
        for rs in self._selecting(pod):  # an orphan: whoever matches may adopt it
            self.queue.add(object_key(rs))

    def _update_pod(self, old: Object, new: Object) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return  # a resync
        labels_changed = old["metadata"].get("labels") != new["metadata"].get("labels")
        if new["metadata"].get("deletionTimestamp"):
            self._delete_pod(new)
            if labels_changed:
                self._delete_pod(old)
            return
        new_ref, old_ref = controller_of(new), controller_of(old)
        ref_changed = new_ref != old_ref
        namespace = new["metadata"].get("namespace", "")
        if ref_changed and old_ref is not None:
            rs = self._resolve(namespace, old_ref)
            if rs is not None:
                self.queue.add(object_key(rs))
        if new_ref is not None:
            rs = self._resolve(namespace, new_ref)
            if rs is None:
                return
            self.queue.add(object_key(rs))
            min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
            if not is_pod_ready(old) and is_pod_ready(new) and min_ready > 0:
                self.queue.add_after(object_key(rs), min_ready + 1.0)  # to count it available then
            return
        if labels_changed or ref_changed:
            for rs in self._selecting(new):
                self.queue.add(object_key(rs))

    def _delete_pod(self, pod: Object) -> None:
        ref = controller_of(pod)
        if ref is None:
            return
        rs = self._resolve(pod["metadata"].get("namespace", ""), ref)
        if rs is None:
            return
        key = object_key(rs)
        self.expectations.deletion_of_observed(key, object_key(pod))
        self.queue.add(key)

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        rs = self.sets.indexer.get(key)
        if rs is None:
            self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = self.kind.selector(rs)
        except (SelectorParseError, ValueError) as err:
            log.info("%s %s: invalid selector: %s", self.kind.kind, key, err)
            return
        namespace = rs["metadata"].get("namespace", "")
        active = filter_active_pods(self.pods.indexer.list(namespace))
        pods = await self._claim(rs, selector, active)
        manage_error: Exception | None = None
        if needs_sync and not rs["metadata"].get("deletionTimestamp"):
            try:
                await self._manage_replicas(key, pods, rs)
            except (errors.StatusError, ValueError) as err:
                manage_error = err
        updated = await self._update_status(rs, self._calculate_status(rs, pods, manage_error))
        min_ready = int((updated.get("spec") or {}).get("minReadySeconds") or 0)
        status = updated.get("status") or {}
        if manage_error is None and min_ready > 0 and status.get("readyReplicas", 0) == _replicas(updated) \
                and status.get("availableReplicas", 0) != _replicas(updated):
            self.queue.add_after(key, float(min_ready))
        if manage_error is not None:
            raise manage_error

    async def _claim(self, rs: Object, selector: Selector, pods: list[Object]) -> list[Object]:
        sets = self.client.resource(self.kind.group, self.kind.version, self.kind.resource)
        meta = rs["metadata"]

        async def fresh() -> Object:
            current = await sets.namespace(meta["namespace"]).get(meta["name"])
            if current["metadata"].get("uid") != meta.get("uid"):
                raise ValueError(f"original {self.kind.kind} {meta['namespace']}/{meta['name']} is gone: got uid "
                                 f"{current['metadata'].get('uid')}, wanted {meta.get('uid')}")
            return current

        async def patch(namespace: str, name: str, body: Object) -> Object:
            return await self.pod_control.patch_pod(namespace, name, body)

        manager = ControllerRefManager(rs, selector, self.kind.api_version, self.kind.kind, patch,
                                       recheck_deletion_timestamp(fresh))
        return await manager.claim(pods)

    async def _manage_replicas(self, key: str, pods: list[Object], rs: Object) -> None:
        diff = len(pods) - _replicas(rs)
        if diff < 0:
            await self._create(key, rs, min(-diff, BURST_REPLICAS))
        elif diff > 0:
            await self._delete(key, rs, pods, min(diff, BURST_REPLICAS))

    async def _create(self, key: str, rs: Object, count: int) -> None:
        self.expectations.expect_creations(key, count)
        template = (rs.get("spec") or {}).get("template") or {}
        ref = new_controller_ref(rs, self.kind.api_version, self.kind.kind)
        namespace = rs["metadata"]["namespace"]
        created, failure = 0, None
        for size in slow_start_batch(count):
            results = await asyncio.gather(
                *(self.pod_control.create_pods(namespace, template, rs, ref) for _ in range(size)),
                return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException) and not _namespace_terminating(r)]
            created += size - len(failures)
            if failures:
                failure = failures[0]
                break
        for _ in range(count - created):  # never coming: not waited for
            self.expectations.creation_observed(key)
        if failure is not None:
            raise failure

    async def _delete(self, key: str, rs: Object, pods: list[Object], count: int) -> None:
        doomed = self._pods_to_delete(rs, pods, count)
        self.expectations.expect_deletions_of(key, [object_key(p) for p in doomed])
        namespace = rs["metadata"]["namespace"]
        results = await asyncio.gather(
            *(self.pod_control.delete_pod(namespace, p["metadata"]["name"], rs) for p in doomed),
            return_exceptions=True)
        failure = None
        for pod, result in zip(doomed, results, strict=True):
            if isinstance(result, BaseException):
                self.expectations.deletion_of_observed(key, object_key(pod))
                if not (isinstance(result, errors.StatusError) and result.code == 404) and failure is None:
                    failure = result
        if failure is not None:
            raise failure

    def _pods_to_delete(self, rs: Object, pods: list[Object], count: int) -> list[Object]:
        """getPodsToDelete: ranked by how many of the related controllers' active pods share their node."""
        if count >= len(pods):
            return pods[:count]
        on_node: dict[str, int] = {}
        for pod in self._related_pods(rs):
            if is_pod_active(pod):
                node = (pod.get("spec") or {}).get("nodeName") or ""
                on_node[node] = on_node.get(node, 0) + 1
        ranks = [on_node.get((p.get("spec") or {}).get("nodeName") or "", 0) for p in pods]
        return rank_pods_for_deletion(pods, ranks, self.clock())[:count]

    def _related_pods(self, rs: Object) -> list[Object]:
        """The pods of every controller with the same owner as this one (a Deployment's ReplicaSets)."""
        owner = controller_of(rs)
        namespace = rs["metadata"].get("namespace", "")
        related = [rs]
        if owner is not None:
            related = [r for r in self.sets.indexer.list(namespace)
                       if (controller_of(r) or {}).get("uid") == owner.get("uid")]
        seen: set[str] = set()
        pods = []
        for other in related:
            try:
                selector = self.kind.selector(other)
            except (SelectorParseError, ValueError):
                continue
            for pod in self.pods.indexer.list(namespace):
                uid = pod["metadata"].get("uid", "")
                if uid not in seen and selector.matches(pod["metadata"].get("labels") or {}):
                    seen.add(uid)
                    pods.append(pod)
        return pods

    # ---- status ----

    def _calculate_status(self, rs: Object, pods: list[Object], manage_error: Exception | None) -> Object:
        status = dict(rs.get("status") or {})
        template_labels = (((rs.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock()
        fully_labeled = ready = available = 0
        for pod in pods:
            labels = pod["metadata"].get("labels") or {}
            if all(labels.get(k) == v for k, v in template_labels.items()):
                fully_labeled += 1
            if is_pod_ready(pod):
                ready += 1
                if is_pod_available(pod, min_ready, now):
                    available += 1
        conditions = list(status.get("conditions") or ())
        failing = any(c.get("type") == REPLICA_FAILURE for c in conditions)
        if manage_error is not None and not failing:
            diff = len(pods) - _replicas(rs)
            reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
            message = manage_error.message if isinstance(manage_error, errors.StatusError) else str(manage_error)
            conditions.append({"type": REPLICA_FAILURE, "status": "True", "lastTransitionTime": now_rfc3339(),
                               "reason": reason, "message": message})
        elif manage_error is None and failing:
            conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
        for field_name, value in (("replicas", len(pods)), ("fullyLabeledReplicas", fully_labeled),
                                  ("readyReplicas", ready), ("availableReplicas", available)):
            status[field_name] = value
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        return status

    async def _update_status(self, rs: Object, status: Object) -> Object:
        current = rs.get("status") or {}
        generation = rs["metadata"].get("generation", 0)
        if all(current.get(f, 0) == status.get(f, 0) for f in
               ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")) \
                and current.get("observedGeneration", 0) == generation \
                and (current.get("conditions") or []) == (status.get("conditions") or []):
            return rs
        api = self.client.resource(self.kind.group, self.kind.version, self.kind.resource).namespace(
            rs["metadata"]["namespace"])
        for attempt in range(STATUS_UPDATE_RETRIES + 1):
            status["observedGeneration"] = rs["metadata"].get("generation", 0)
            try:
                return await api.update_status({**rs, "status": status})
            except errors.StatusError:
                if attempt >= STATUS_UPDATE_RETRIES:
                    raise
                rs = await api.get(rs["metadata"]["name"])
        raise AssertionError("unreachable")


def _namespace_terminating(err: BaseException) -> bool:
    """A create refused because the namespace is being deleted counts as done (nothing to retry)."""
    if not isinstance(err, errors.StatusError):
        return False
    return any(c.get("type") == "NamespaceTerminating" for c in (err.details or {}).get("causes") or ())

