"""What the workload controllers share (pkg/controller/controller_utils.go): expectations of the creates
and deletes a controller made and has yet to see in its informer, creating pods from a template with the
controller's reference and Events, and which pods count as active or ready."""

from __future__ import annotations

import copy
import functools
import logging
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from ..apimachinery.labels import Selector, SelectorParseError
from ..apimachinery.meta import parse_time
from ..apimachinery.validation import is_dns1123_subdomain
from ..client.record import NORMAL, WARNING, EventRecorder
from ..client.rest import STRATEGIC_MERGE_PATCH, ResourceClient

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]

# A controller that saw none of the creates or deletes it expects syncs again after this long anyway.
EXPECTATIONS_TIMEOUT = 5 * 60.0
# Creates are sent in batches of 1, 2, 4, ... (slowStartBatch): a template every create of which fails
# (a quota, an admission webhook) costs one request, not `replicas` requests.
SLOW_START_INITIAL_BATCH_SIZE = 1

FAILED_CREATE_POD_REASON = "FailedCreate"
SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreate"
FAILED_DELETE_POD_REASON = "FailedDelete"
SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDelete"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


# ---- expectations ----

@dataclass
class ControlleeExpectations:
    add: int
    delete: int
    timestamp: float

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Per controller key, the creates and deletes still to be observed: a controller does not act on a
    key again until its informer has seen what it did last time (or EXPECTATIONS_TIMEOUT passed)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._store: dict[str, ControlleeExpectations] = {}

    def get(self, key: str) -> ControlleeExpectations | None:
        return self._store.get(key)

    def satisfied(self, key: str) -> bool:
        exp = self._store.get(key)
        if exp is None:
            return True  # never recorded, or deleted: sync
        return exp.fulfilled() or self.clock() - exp.timestamp > EXPECTATIONS_TIMEOUT

    def set(self, key: str, add: int, delete: int) -> None:
        self._store[key] = ControlleeExpectations(add, delete, self.clock())

    def expect_creations(self, key: str, adds: int) -> None:
        self.set(key, adds, 0)

    def expect_deletions(self, key: str, deletes: int) -> None:
        self.set(key, 0, deletes)

    def lower(self, key: str, add: int, delete: int) -> None:
        exp = self._store.get(key)
        if exp is not None:
            exp.add -= add
            exp.delete -= delete

    def raise_(self, key: str, add: int, delete: int) -> None:
        self.lower(key, -add, -delete)

    def creation_observed(self, key: str) -> None:
        self.lower(key, 1, 0)

    def deletion_observed(self, key: str) -> None:
        self.lower(key, 0, 1)

    def delete(self, key: str) -> None:
        self._store.pop(key, None)


class UIDTrackingControllerExpectations(ControllerExpectations):
    """Deletions tracked by the deleted objects' keys, so that a pod deleted twice (a graceful delete, then
    its final removal) is counted once."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        super().__init__(clock)
        self._uids: dict[str, set[str]] = {}

    def get_uids(self, key: str) -> set[str] | None:
        return self._uids.get(key)

    def expect_deletions_of(self, key: str, deleted_keys: Iterable[str]) -> None:
        expected = set(deleted_keys)
        if self._uids.get(key):
            log.error("Clobbering existing delete keys: %s", sorted(self._uids[key]))
        self._uids[key] = expected
        self.expect_deletions(key, len(expected))

    def deletion_of_observed(self, key: str, deleted_key: str) -> None:
        uids = self._uids.get(key)
        if uids is not None and deleted_key in uids:
            self.deletion_observed(key)
            uids.discard(deleted_key)

    def delete(self, key: str) -> None:
        super().delete(key)
        self._uids.pop(key, None)


def slow_start_batch(count: int, initial_batch_size: int = SLOW_START_INITIAL_BATCH_SIZE) -> list[int]:
    """The sizes of the batches slowStartBatch sends `count` calls in: 1, 2, 4, ... (the last cut to fit).
    The caller stops at the first batch with a failure."""
    sizes, remaining, size = [], count, min(count, initial_batch_size)
    while size > 0:
        sizes.append(size)
        remaining -= size
        size = min(2 * size, remaining)
    return sizes


# ---- controller references ----

def controller_of(obj: Object) -> Object | None:
    """metav1.GetControllerOf: the owner reference with controller: true."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def new_controller_ref(owner: Object, api_version: str, kind: str) -> Object:
    """metav1.NewControllerRef: what a controller puts on what it creates."""
    meta = owner["metadata"]
    return {"apiVersion": api_version, "kind": kind, "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def controllers_selecting(obj: Object, controllers: Iterable[Object],
                          selector_of: Callable[[Object], Selector]) -> list[Object]:
    """The controllers whose (valid, non-empty) selector matches the object's labels: who may adopt an
    orphan (GetPodReplicaSets, GetDeploymentsForReplicaSet)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    found = []
    for controller in controllers:
        try:
            selector = selector_of(controller)
        except (SelectorParseError, ValueError):
            continue
        if not selector.empty() and selector.matches(labels):
            found.append(controller)
    return found


def owner_ref_controller_patch(controller: Object, api_version: str, kind: str, uid: str) -> Object:
    """The strategic merge patch adopting an object (its uid as a precondition)."""
    return {"metadata": {"ownerReferences": [new_controller_ref(controller, api_version, kind)], "uid": uid}}


def delete_owner_ref_patch(dependent_uid: str, *owner_uids: str) -> Object:
    """The strategic merge patch releasing an object from its owners."""
    return {"metadata": {"uid": dependent_uid,
                         "ownerReferences": [{"$patch": "delete", "uid": uid} for uid in owner_uids]}}


# ---- pods ----

def pod_phase(pod: Object) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_pod_active(pod: Object) -> bool:
    """Neither succeeded nor failed, nor being deleted."""
    return pod_phase(pod) not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def filter_active_pods(pods: Iterable[Object]) -> list[Object]:
    return [pod for pod in pods if is_pod_active(pod)]


def pod_condition(pod: Object, condition_type: str) -> Object | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == condition_type:
            return condition
    return None


def is_pod_ready(pod: Object) -> bool:
    condition = pod_condition(pod, "Ready")
    return condition is not None and condition.get("status") == "True"


def pods_prefix(controller_name: str) -> str:
    """generateName for a controller's pods: `<name>-`, or the name alone when that is not a valid prefix."""
    prefix = f"{controller_name}-"
    # ValidatePodName(prefix, true) masks the trailing dash before checking the name.
    return prefix if not is_dns1123_subdomain(prefix[:-1] + "a") else controller_name


def pod_from_template(template: Object, parent: Object, controller_ref: Object | None) -> Object:
    """GetPodFromTemplate: the template's labels, annotations, finalizers and spec, named after the parent."""
    meta = template.get("metadata") or {}
    pod_meta: Object = {"generateName": pods_prefix(parent["metadata"]["name"])}
    for key in ("labels", "annotations"):
        if meta.get(key):
            pod_meta[key] = dict(meta[key])
    if meta.get("finalizers"):
        pod_meta["finalizers"] = list(meta["finalizers"])
    if controller_ref is not None:
        pod_meta["ownerReferences"] = [dict(controller_ref)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(template.get("spec") or {})}


@dataclass
class PodControl:
    """RealPodControl: creates and deletes a controller's pods through the loopback client, with the
    SuccessfulCreate / FailedCreate / SuccessfulDelete / FailedDelete Events on the controller."""

    pods: Callable[[str], ResourceClient]  # the pods client of a namespace
    recorder: EventRecorder
    created: list[str] = field(default_factory=list)  # names, for logs and tests

    async def create_pods(self, namespace: str, template: Object, parent: Object,
                          controller_ref: Object | None = None, node_name: str = "") -> Object:
        pod = pod_from_template(template, parent, controller_ref)
        if node_name:
            pod["spec"]["nodeName"] = node_name
        if not pod["metadata"].get("labels"):
            raise ValueError("unable to create pods, no labels")
        try:
            created = await self.pods(namespace).create(pod)
        except errors.StatusError as err:
            causes = (err.details or {}).get("causes") or []
            if not any(c.get("type") == NAMESPACE_TERMINATING_CAUSE for c in causes):
                self.recorder.event(parent, WARNING, FAILED_CREATE_POD_REASON, f"Error creating: {err.message}")
            raise
        self.recorder.event(parent, NORMAL, SUCCESSFUL_CREATE_POD_REASON, f"Created pod: {created['metadata']['name']}")
        return created

    async def delete_pod(self, namespace: str, name: str, parent: Object) -> None:
        try:
            await self.pods(namespace).delete(name)
        except errors.StatusError as err:
            if err.code == 404:
                raise
            self.recorder.event(parent, WARNING, FAILED_DELETE_POD_REASON, f"Error deleting: {err.message}")
            raise
        self.recorder.event(parent, NORMAL, SUCCESSFUL_DELETE_POD_REASON, f"Deleted pod: {name}")

    async def patch_pod(self, namespace: str, name: str, patch: Object) -> Object:
        return await self.pods(namespace).patch(name, patch, STRATEGIC_MERGE_PATCH)


# ---- which pods go first on scale-down ----

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def pod_ready_time(pod: Object) -> float | None:
    condition = pod_condition(pod, "Ready")
    if condition is None or condition.get("status") != "True":
        return None
    return parse_time(condition.get("lastTransitionTime"))


def is_pod_available(pod: Object, min_ready_seconds: int, now: float) -> bool:
    """Ready for at least minReadySeconds (podutil.IsPodAvailable)."""
    if not is_pod_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    ready_at = pod_ready_time(pod)
    return ready_at is not None and ready_at + min_ready_seconds < now


def deletion_cost(pod: Object) -> int:
    """The pod-deletion-cost annotation as an int32; 0 when unset or not a plain integer ("+1", "007")."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(POD_DELETION_COST)
    if not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return 0
    try:
        cost = int(value, 10)
    except ValueError:
        return 0
    return cost if -(2**31) <= cost < 2**31 else 0


def _max_restarts(pod: Object) -> int:
    return max((int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or ()),
               default=0)


def _log_rank_diff(t1: float, t2: float, now: float) -> int:
    d1, d2 = (now - t1) * 1e9, (now - t2) * 1e9
    r1 = int(math.log2(d1)) if d1 > 0 else -1
    r2 = int(math.log2(d2)) if d2 > 0 else -1
    return r1 - r2


def _newer_first(t1: float | None, t2: float | None, uid1: str, uid2: str, now: float) -> int:
    """Unset < newer < older, older ones bucketed by the log2 of their age (LogarithmicScaleDown), ties
    broken by UID: -1 when the first goes first."""
    if t1 is None or t2 is None or not now:
        if t1 is None or t2 is None:
            return -1 if t1 is None else 1
        return -1 if t1 > t2 else 1
    diff = _log_rank_diff(t1, t2, now)
    if diff == 0:
        return -1 if uid1 < uid2 else (1 if uid1 > uid2 else 0)
    return -1 if diff < 0 else 1


def rank_pods_for_deletion(pods: list[Object], ranks: list[int], now: float) -> list[Object]:
    """ActivePodsWithRanks's order: the pods a scale-down deletes first come first. Unassigned before
    assigned; Pending, Unknown, Running; not ready before ready; lower deletion cost; more colocated
    (higher rank); ready more recently; more container restarts; created more recently."""

    def compare(a: tuple[Object, int], b: tuple[Object, int]) -> int:
        (p, rank_p), (q, rank_q) = a, b
        node_p, node_q = (p.get("spec") or {}).get("nodeName") or "", (q.get("spec") or {}).get("nodeName") or ""
        if node_p != node_q and (not node_p or not node_q):
            return -1 if not node_p else 1
        phase_p, phase_q = _PHASE_ORDINAL.get(pod_phase(p), 0), _PHASE_ORDINAL.get(pod_phase(q), 0)
        if phase_p != phase_q:
            return -1 if phase_p < phase_q else 1
        ready_p, ready_q = is_pod_ready(p), is_pod_ready(q)
        if ready_p != ready_q:
            return -1 if not ready_p else 1
        cost_p, cost_q = deletion_cost(p), deletion_cost(q)
        if cost_p != cost_q:
            return -1 if cost_p < cost_q else 1
        if rank_p != rank_q:
            return -1 if rank_p > rank_q else 1
        uid_p, uid_q = p["metadata"].get("uid", ""), q["metadata"].get("uid", "")
        if ready_p and ready_q:
            time_p, time_q = pod_ready_time(p), pod_ready_time(q)
            if time_p != time_q:
                order = _newer_first(time_p, time_q, uid_p, uid_q, now)
                if order:
                    return order
        restarts_p, restarts_q = _max_restarts(p), _max_restarts(q)
        if restarts_p != restarts_q:
            return -1 if restarts_p > restarts_q else 1
        created_p = parse_time(p["metadata"].get("creationTimestamp"))
        created_q = parse_time(q["metadata"].get("creationTimestamp"))
        if created_p != created_q:
            return _newer_first(created_p, created_q, uid_p, uid_q, now)
        return 0

    return [pod for pod, _ in sorted(zip(pods, ranks, strict=True), key=functools.cmp_to_key(compare))]
