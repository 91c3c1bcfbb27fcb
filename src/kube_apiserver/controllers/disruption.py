"""The disruption controller (pkg/controller/disruption): writes each PodDisruptionBudget's status, which
the pods/eviction subresource spends: how many of its pods are healthy (Ready, not being deleted, not
just evicted), how many must be (minAvailable, or the scale less maxUnavailable; a percentage of the
scale of the pods' controllers), how many disruptions that allows, the DisruptionAllowed condition, and
the disruptedPods entries the eviction made, dropped once the pod is gone or DELETION_TIMEOUT passed.
A budget it cannot compute gets disruptionsAllowed 0 and the condition's SyncFailed reason.

A pod whose DisruptionTarget condition (an eviction's) is older than STALE_POD_DISRUPTION_TIMEOUT while the
pod is neither being deleted nor terminal had its deletion fail: the condition is set back to False."""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import wall_time
from ..apimachinery.labels import SelectorParseError, selector_from_label_selector
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.record import NORMAL, WARNING, EventRecorder
from ..client.rest import STRATEGIC_MERGE_PATCH, Client
from ..client.workqueue import WorkQueue, run_worker
from .controller_utils import controller_of, is_pod_ready, parse_time, pod_condition, pod_phase
from .deployment.util import scaled_value_from_int_or_percent
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
COMPONENT = "controllermanager"
DELETION_TIMEOUT = 2 * 60.0  # how long an evicted pod counts as disrupted before it must be gone
STALE_POD_DISRUPTION_TIMEOUT = 2 * 60.0
DISRUPTION_TARGET = "DisruptionTarget"
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"
# Finds a controller's scale by (namespace, name) for the kinds with no informer: the /scale subresource.
ScaleGetter = Callable[[str, str, str, str], Awaitable[Object | None]]


class ExpectedCountError(Exception):
    pass


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _replicas(obj: Object) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return 1 if replicas is None else int(replicas)


def _rfc3339(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


class DisruptionController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        scale_of: ScaleGetter | None = None,
        clock: Callable[[], float] = wall_time,
        workers: int = 1,
    ):
        super().__init__("disruption", client, recorder, workers)
        self.clock = clock
        self.scale_of = scale_of
        self.budgets = informers.for_resource("policy", "v1", "poddisruptionbudgets")
        self.pods = informers.for_resource("", "v1", "pods")
        self.rcs = informers.for_resource("", "v1", "replicationcontrollers")
        self.replica_sets = informers.for_resource("apps", "v1", "replicasets")
        self.deployments = informers.for_resource("apps", "v1", "deployments")
        self.stateful_sets = informers.for_resource("apps", "v1", "statefulsets")
        self.stale_queue: WorkQueue[str] = WorkQueue("stale_pod_disruption")
        self.informers = (
            self.budgets,
            self.pods,
            self.rcs,
            self.replica_sets,
            self.deployments,
            self.stateful_sets,
        )

    def worker_syncs(self) -> list[Any]:
        return [*super().worker_syncs(), self._stale_pod_disruption_worker]

    async def stop(self) -> None:
        self.stale_queue.shut_down()
        await super().stop()

    def register_handlers(self) -> None:
        self.budgets.add_event_handler(
            EventHandler(self._enqueue, lambda old, new: self._enqueue(new), self._enqueue)
        )
        self.pods.add_event_handler(
            EventHandler(self._pod_changed, lambda old, new: self._pod_changed(new), self._pod_changed)
        )

    # ---- informer handlers ----

    def _enqueue(self, pdb: Object) -> None:
        self.queue.add(object_key(pdb))

    def _pod_changed(self, pod: Object) -> None:
        """getPdbForPod: the (first) budget selecting the pod; and a stale DisruptionTarget's cleanup."""
        wait = self._stale_disruption_wait(pod)
        if wait is not None:
            self.stale_queue.add_after(object_key(pod), wait)
        labels = pod["metadata"].get("labels") or {}
        for pdb in self.budgets.indexer.list(pod["metadata"].get("namespace", "")):
            try:
                selector = selector_from_label_selector((pdb.get("spec") or {}).get("selector"))
            except (SelectorParseError, ValueError):
                continue
            if selector.matches(labels):
                self.queue.add(object_key(pdb))
                return

    # ---- stale DisruptionTarget conditions ----

    def _stale_disruption_wait(self, pod: Object) -> float | None:
        """nonTerminatingPodHasStaleDisruptionCondition: how long until the pod's DisruptionTarget condition
        is stale (None: it has none to clean up; a kubelet's never goes stale)."""
        if pod["metadata"].get("deletionTimestamp") or pod_phase(pod) in ("Succeeded", "Failed"):
            return None
        condition = pod_condition(pod, DISRUPTION_TARGET)
        if (
            condition is None
            or condition.get("status") != "True"
            or condition.get("reason") == "TerminationByKubelet"
        ):
            return None
        since = parse_time(condition.get("lastTransitionTime"))
        age = self.clock() - since if since is not None else STALE_POD_DISRUPTION_TIMEOUT
        return max(0.0, STALE_POD_DISRUPTION_TIMEOUT - age)

    async def _stale_pod_disruption_worker(self) -> None:
        await run_worker(self.stale_queue, self._sync_stale_pod_disruption, "disruption stale pod disruption")

    async def _sync_stale_pod_disruption(self, key: str) -> None:
        pod = self.pods.indexer.get(key)
        if pod is None:
            return
        wait = self._stale_disruption_wait(pod)
        if wait is None:
            return
        if wait > 0:
            self.stale_queue.add_after(key, wait)
            return
        patch = {
            "metadata": {"resourceVersion": pod["metadata"].get("resourceVersion")},
            "status": {
                "conditions": [
                    {
                        "type": DISRUPTION_TARGET,
                        "status": "False",
                        "lastTransitionTime": _rfc3339(self.clock()),
                    }
                ]
            },
        }
        api = self.client.resource("", "v1", "pods").namespace(pod["metadata"].get("namespace", ""))
        try:
            await api.patch(pod["metadata"]["name"], patch, STRATEGIC_MERGE_PATCH, "status")
        except errors.StatusError as err:
            if err.code != 404:
                raise

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        pdb = self.budgets.indexer.get(key)
        if pdb is None:
            return
        try:
            await self._try_sync(pdb)
        except errors.StatusError as err:
            if err.code == 409:
                raise  # retried without the fail-safe
            await self._fail_safe(pdb, err.message)
            raise
        except (ExpectedCountError, SelectorParseError, ValueError) as err:
            log.info("disruption: failed to sync pdb %s: %s", key, err)
            await self._fail_safe(pdb, str(err))

    def _pods_for(self, pdb: Object) -> list[Object]:
        selector = selector_from_label_selector((pdb.get("spec") or {}).get("selector"))
        return [
            p
            for p in self.pods.indexer.list(pdb["metadata"].get("namespace", ""))
            if selector.matches(p["metadata"].get("labels") or {})
        ]

    async def _try_sync(self, pdb: Object) -> None:
        pods = self._pods_for(pdb)
        if not pods:
            self.recorder.event(pdb, NORMAL, "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = await self._expected_pod_count(pdb, pods)
        except (ExpectedCountError, ValueError) as err:
            self.recorder.event(
                pdb,
                WARNING,
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {err}",
            )
            raise
        if unmanaged:
            self.recorder.event(
                pdb,
                WARNING,
                "UnmanagedPods",
                f"Pods selected by this PodDisruptionBudget (selector: {_selector_text(pdb)}) were found to be "
                "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result "
                'in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the '
                "PDB to an integer value.",
            )
        now = self.clock()
        disrupted, recheck_at = self._disrupted_pods(pods, pdb, now)
        healthy = _count_healthy(pods, disrupted, now)
        await self._update_status(pdb, healthy, desired, expected, disrupted)
        if recheck_at is not None:
            self.queue.add_after(object_key(pdb), max(0.0, recheck_at - now))

    async def _expected_pod_count(self, pdb: Object, pods: list[Object]) -> tuple[int, int, list[str]]:
        """getExpectedPodCount: (expectedPods, desiredHealthy, unmanaged pods)."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = await self._expected_scale(pdb, pods)
            max_unavailable = scaled_value_from_int_or_percent(spec["maxUnavailable"], expected, True)
            return expected, max(0, expected - max_unavailable), unmanaged
        min_available = spec.get("minAvailable")
        if isinstance(min_available, int) and not isinstance(min_available, bool):
            return len(pods), min_available, []
        if isinstance(min_available, str):
            expected, unmanaged = await self._expected_scale(pdb, pods)
            return expected, scaled_value_from_int_or_percent(min_available, expected, True), unmanaged
        return 0, 0, []

    async def _expected_scale(self, pdb: Object, pods: list[Object]) -> tuple[int, list[str]]:
        """getExpectedScale: the sum of the scales of the pods' controllers (each counted once)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                unmanaged.append(pod["metadata"].get("name", ""))
                continue
            if ref.get("uid") in scales:
                continue
            found = await self._find_scale(ref, pod["metadata"].get("namespace", ""))
            if found is None:
                message = f'found no controllers for pod "{pod["metadata"].get("name", "")}"'
                self.recorder.event(pdb, WARNING, "NoControllers", message)
                raise ExpectedCountError(message)
            uid, scale = found
            scales[uid] = scale
        return sum(scales.values()), unmanaged

    async def _find_scale(self, ref: Object, namespace: str) -> tuple[str, int] | None:
        """The finders, in upstream's order: ReplicationController, the Deployment of a ReplicaSet, a
        ReplicaSet of no Deployment, StatefulSet, then any kind's /scale."""
        kind, group = ref.get("kind"), _group(ref.get("apiVersion") or "")
        name, uid = ref.get("name", ""), ref.get("uid")
        if kind == "ReplicationController" and group == "":
            return self._owned_scale(self.rcs.indexer.get_by_name(namespace, name), uid)
        if kind == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self.replica_sets.indexer.get_by_name(namespace, name)
            if rs is None or rs["metadata"].get("uid") != uid:
                return None
            owner = controller_of(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                if _group(owner.get("apiVersion") or "") not in ("apps", "extensions"):
                    return None
                deployment = self.deployments.indexer.get_by_name(namespace, owner.get("name", ""))
                return self._owned_scale(deployment, owner.get("uid"))
            return self._owned_scale(rs, uid)
        if kind == "StatefulSet" and group == "apps":
            return self._owned_scale(self.stateful_sets.indexer.get_by_name(namespace, name), uid)
        if self.scale_of is None:
            return None
        scale = await self.scale_of(ref.get("apiVersion") or "", kind or "", namespace, name)
        if scale is None or scale["metadata"].get("uid") != uid:
            return None
        return uid, int((scale.get("spec") or {}).get("replicas") or 0)

    @staticmethod
    def _owned_scale(obj: Object | None, uid: str | None) -> tuple[str, int] | None:
        if obj is None or obj["metadata"].get("uid") != uid:
            return None
        return obj["metadata"]["uid"], _replicas(obj)

    def _disrupted_pods(
        self, pods: list[Object], pdb: Object, now: float
    ) -> tuple[dict[str, str], float | None]:
        """buildDisruptedPodMap: the entries of pods still there, not being deleted, and evicted less
        than DELETION_TIMEOUT ago; and when the earliest of them runs out."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck_at: float | None = None
        for pod in pods:
            name = pod["metadata"].get("name", "")
            if pod["metadata"].get("deletionTimestamp") or name not in recorded:
                continue
            disrupted_at = parse_time(recorded[name])
            if disrupted_at is None:
                continue
            expected_deletion = disrupted_at + DELETION_TIMEOUT
            if expected_deletion < now:
                meta = pdb["metadata"]
                self.recorder.event(
                    pod,
                    WARNING,
                    "NotDeleted",
                    "Pod was expected by PDB "
                    f"{meta.get('namespace', '')}/{meta.get('name', '')} to be deleted but it wasn't",
                )
            else:
                recheck_at = expected_deletion if recheck_at is None else min(recheck_at, expected_deletion)
                kept[name] = recorded[name]
        return kept, recheck_at

    async def _update_status(
        self, pdb: Object, healthy: int, desired: int, expected: int, disrupted: dict[str, str]
    ) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0  # a budget matching no pods yet is safe when they come
        status = pdb.get("status") or {}
        generation = pdb["metadata"].get("generation", 0)
        if (
            status.get("currentHealthy", 0) == healthy
            and status.get("desiredHealthy", 0) == desired
            and status.get("expectedPods", 0) == expected
            and status.get("disruptionsAllowed", 0) == allowed
            and (status.get("disruptedPods") or {}) == disrupted
            and status.get("observedGeneration", 0) == generation
            and _conditions_up_to_date(status)
        ):
            return
        new_status: Object = {
            "disruptedPods": disrupted,
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "observedGeneration": generation,
            "conditions": copy.deepcopy(status.get("conditions") or []),
        }
        if not disrupted:
            del new_status["disruptedPods"]
        if allowed > 0:
            _set_condition(new_status, "True", SUFFICIENT_PODS, "")
        else:
            _set_condition(new_status, "False", INSUFFICIENT_PODS, "")
        await self._write_status({**pdb, "status": new_status})

    async def _fail_safe(self, pdb: Object, message: str) -> None:
        """failSafe: at least no disruption allowed, and the condition says why."""
        status = copy.deepcopy(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        status.setdefault("conditions", [])
        _set_condition(status, "False", SYNC_FAILED, message)
        try:
            await self._write_status({**pdb, "status": status})
        except errors.StatusError as err:
            log.info("disruption: fail-safe status of %s: %s", object_key(pdb), err.message)

    async def _write_status(self, pdb: Object) -> None:
        api = self.client.resource("policy", "v1", "poddisruptionbudgets").namespace(
            pdb["metadata"]["namespace"]
        )
        await api.update_status(pdb)


def _count_healthy(pods: list[Object], disrupted: dict[str, str], now: float) -> int:
    """countHealthyPods: Ready pods neither being deleted nor recently evicted."""
    healthy = 0
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        disrupted_at = parse_time(disrupted.get(pod["metadata"].get("name", "")))
        if disrupted_at is not None and disrupted_at + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def _set_condition(status: Object, condition_status: str, reason: str, message: str) -> None:
    """meta.SetStatusCondition of DisruptionAllowed: the transition time moves only with the status."""
    wanted = {
        "type": DISRUPTION_ALLOWED,
        "status": condition_status,
        "reason": reason,
        "message": message,
        "observedGeneration": status.get("observedGeneration", 0),
    }
    conditions = status["conditions"]
    for condition in conditions:
        if condition.get("type") == DISRUPTION_ALLOWED:
            if condition.get("status") != condition_status:
                condition["lastTransitionTime"] = _rfc3339(wall_time())
            condition.update(wanted)
            return
    conditions.append({**wanted, "lastTransitionTime": _rfc3339(wall_time())})


def _conditions_up_to_date(status: Object) -> bool:
    """pdbhelper.ConditionsAreUpToDate."""
    for condition in status.get("conditions") or ():
        if condition.get("type") == DISRUPTION_ALLOWED:
            if condition.get("observedGeneration", 0) != status.get("observedGeneration", 0):
                return False
            if status.get("disruptionsAllowed", 0) > 0:
                return condition.get("status") == "True" and condition.get("reason") == SUFFICIENT_PODS
            return condition.get("status") == "False" and condition.get("reason") == INSUFFICIENT_PODS
    return False


def _selector_text(pdb: Object) -> str:
    """The selector as Go's %v prints a *metav1.LabelSelector (its generated String())."""
    selector = (pdb.get("spec") or {}).get("selector")
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    requirements = "".join(
        f"LabelSelectorRequirement{{Key:{r.get('key', '')},Operator:{r.get('operator', '')},"
        f"Values:[{' '.join(r.get('values') or ())}],}},"
        for r in selector.get("matchExpressions") or ()
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}"
    )
