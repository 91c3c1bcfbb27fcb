"""The daemonset controller (pkg/controller/daemon): one pod of each DaemonSet on every node that should
run it (its required node affinity and node selector match, no untolerated NoSchedule or NoExecute
taint beyond those the controller tolerates for daemons), pinned there by a required node affinity on
metadata.name that the scheduler honours; pods on nodes that should not run it are deleted, failed ones
replaced (with a backoff per node). A RollingUpdate replaces out-of-date pods within maxUnavailable, or
surges new ones beside them within maxSurge; OnDelete leaves it to the user. ControllerRevisions keep the
template history (label controller-revision-hash); the status counts desired, current, misscheduled,
ready, updated, available and unavailable daemons."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...apimachinery.labels import Selector, SelectorParseError, selector_from_label_selector
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import NORMAL, WARNING, EventRecorder
from ...client.rest import STRATEGIC_MERGE_PATCH, Client, ResourceClient
from ..controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from ..controller_utils import (
    ControllerExpectations,
    PodControl,
    controller_of,
    controllers_selecting,
    is_pod_available,
    is_pod_ready,
    new_controller_ref,
    parse_time,
    pod_phase,
    slow_start_batch,
)
from ..deployment.util import compute_hash
from ..history import go_json, revision_number
from ..queue_controller import QueueController
from . import util

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
COMPONENT = "daemonset-controller"
CONCURRENT_DAEMONSET_SYNCS = 2  # kube-controller-manager's --concurrent-daemonset-syncs
BURST_REPLICAS = 250  # creates or deletes per sync at most
STATUS_UPDATE_RETRIES = 1
DEFAULT_REVISION_HISTORY_LIMIT = 10
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 15 * 60.0  # failed pods deleted at most this often per node
FAILED_DAEMON_POD_REASON = "FailedDaemonPod"
SUCCEEDED_DAEMON_POD_REASON = "SucceededDaemonPod"
SELECTING_ALL_REASON = "SelectingAll"


class Backoff:
    """flowcontrol.Backoff: per key a delay doubling from BACKOFF_INITIAL to BACKOFF_MAX, forgotten once
    unused for twice the maximum."""

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self._entries: dict[str, tuple[float, float]] = {}  # key: (delay, last update)

    def in_backoff_since_update(self, key: str, now: float) -> bool:
        entry = self._entries.get(key)
        return entry is not None and now - entry[1] < entry[0]

    def get(self, key: str) -> float:
        return self._entries.get(key, (0.0, 0.0))[0]

    def next(self, key: str, now: float) -> None:
        delay, last = self._entries.get(key, (0.0, 0.0))
        delay = BACKOFF_INITIAL if not delay or now - last > 2 * BACKOFF_MAX else min(2 * delay, BACKOFF_MAX)
        self._entries[key] = (delay, now)
        if len(self._entries) > 10_000:  # garbage-collect: the stale ones are forgotten anyway
            self._entries = {k: v for k, v in self._entries.items() if now - v[1] <= 2 * BACKOFF_MAX}


def _by_creation_and_phase(a: Object, b: Object) -> int:
    """podByCreationTimestampAndPhase: scheduled first, then oldest, then by name."""
    scheduled_a, scheduled_b = bool(util.spec(a).get("nodeName")), bool(util.spec(b).get("nodeName"))
    if scheduled_a != scheduled_b:
        return -1 if scheduled_a else 1
    key_a = (parse_time(a["metadata"].get("creationTimestamp")) or 0.0, a["metadata"].get("name", ""))
    key_b = (parse_time(b["metadata"].get("creationTimestamp")) or 0.0, b["metadata"].get("name", ""))
    return -1 if key_a < key_b else (1 if key_a > key_b else 0)


def _sorted_pods(pods: list[Object]) -> list[Object]:
    return sorted(pods, key=functools.cmp_to_key(_by_creation_and_phase))


def _selector(ds: Object) -> Selector:
    return selector_from_label_selector(util.spec(ds).get("selector"))


class DaemonSetsController(QueueController):
    name = "daemonset"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        workers: int = CONCURRENT_DAEMONSET_SYNCS,
        clock: Callable[[], float] = wall_time,
    ):
        super().__init__(self.name, client, recorder, workers)
        self.clock = clock
        self.sets = informers.for_resource("apps", "v1", "daemonsets")
        self.revisions = informers.for_resource("apps", "v1", "controllerrevisions")
        self.pods = informers.for_resource("", "v1", "pods")
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.expectations = ControllerExpectations()
        self.failed_pods_backoff = Backoff(clock)
        self.pod_control = PodControl(lambda ns: client.resource("", "v1", "pods").namespace(ns), recorder)
        self.informers = (self.sets, self.revisions, self.pods, self.nodes)

    def _api(self, resource: str, namespace: str) -> ResourceClient:
        group = "" if resource == "pods" else "apps"
        return self.client.resource(group, "v1", resource).namespace(namespace)

    # ---- informer handlers ----

    def register_handlers(self) -> None:
        self.sets.add_event_handler(
            EventHandler(self._enqueue, lambda _o, new: self._enqueue(new), self._delete_set)
        )
        self.revisions.add_event_handler(
            EventHandler(self._add_owned, self._update_owned, self._delete_owned)
        )
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._delete_pod))
        self.nodes.add_event_handler(EventHandler(self._add_node, self._update_node, self._delete_node))

    def _enqueue(self, ds: Object) -> None:
        self.queue.add(object_key(ds))

    def _delete_set(self, ds: Object) -> None:
        self.expectations.delete(object_key(ds))
        self._enqueue(ds)

    def _resolve(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != util.KIND:
            return None
        ds = self.sets.indexer.get_by_name(namespace, ref.get("name", ""))
        if ds is None or ds["metadata"].get("uid") != ref.get("uid"):
            return None
        return ds

    def _owner(self, obj: Object) -> Object | None:
        ref = controller_of(obj)
        return None if ref is None else self._resolve(obj["metadata"].get("namespace", ""), ref)

    def _selecting(self, obj: Object) -> list[Object]:
        return controllers_selecting(
            obj, self.sets.indexer.list(obj["metadata"].get("namespace", "")), _selector
        )

    def _add_owned(self, obj: Object) -> None:
        """A revision (or pod) added: its controller, or whoever may adopt an orphan."""
        if controller_of(obj) is not None:
            ds = self._owner(obj)
            if ds is not None:
                self._enqueue(ds)
            return
        for ds in self._selecting(obj):
            self._enqueue(ds)

    def _update_owned(self, old: Object, new: Object) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        old_ref, new_ref = controller_of(old), controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            previous = self._owner(old)
            if previous is not None:
                self._enqueue(previous)
        if new_ref is not None:
            ds = self._owner(new)
            if ds is not None:
                self._enqueue(ds)
            return
        if old_ref != new_ref or old["metadata"].get("labels") != new["metadata"].get("labels"):
            for ds in self._selecting(new):
                self._enqueue(ds)

    def _delete_owned(self, obj: Object) -> None:
        ds = self._owner(obj)
        if ds is not None:
            self._enqueue(ds)

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod)  # a restarted controller sees a pod being deleted as an add
            return
        ds = self._owner(pod)
        if ds is not None:
            self.expectations.creation_observed(object_key(ds))
        self._add_owned(pod)

    def _update_pod(self, old: Object, new: Object) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        if new["metadata"].get("deletionTimestamp"):
            self._delete_pod(new)  # a graceful delete: replace it now, not once it is gone
            return
        self._update_owned(old, new)
        ds = self._owner(new)
        min_ready = util.min_ready_seconds(ds) if ds is not None else 0
        if ds is not None and min_ready > 0 and not is_pod_ready(old) and is_pod_ready(new):
            self.queue.add_after(object_key(ds), min_ready + 1.0)  # to count it available then

    def _delete_pod(self, pod: Object) -> None:
        ds = self._owner(pod)
        if ds is not None:
            self.expectations.deletion_observed(object_key(ds))
            self._enqueue(ds)

    def _add_node(self, node: Object) -> None:
        for ds in self.sets.indexer.list():
            if util.node_should_run_daemon_pod(node, ds)[0]:
                self._enqueue(ds)

    def _update_node(self, old: Object, new: Object) -> None:
        """Only the daemon sets whose verdict on the node changed (a heartbeat changes none)."""
        for ds in self.sets.indexer.list():
            if util.node_should_run_daemon_pod(old, ds) != util.node_should_run_daemon_pod(new, ds):
                self._enqueue(ds)

    def _delete_node(self, _node: Object) -> None:
        for ds in self.sets.indexer.list():  # pods pinned to the node, never scheduled, go
            self._enqueue(ds)

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        ds = self.sets.indexer.get(key)
        if ds is None:
            self.expectations.delete(key)
            return
        nodes = self.nodes.indexer.list()
        if util.spec(ds).get("selector") == {}:
            self.recorder.event(
                ds,
                WARNING,
                SELECTING_ALL_REASON,
                "This daemon set is selecting all pods. A non-empty selector is required.",
            )
            return
        try:
            selector = _selector(ds)
        except (SelectorParseError, ValueError) as err:
            log.info("DaemonSet %s: invalid selector: %s", key, err)
            return
        if ds["metadata"].get("deletionTimestamp"):
            return  # its history may be going: no status can be computed reliably
        try:
            current, old = await self._construct_history(ds, selector)
        except (errors.StatusError, ValueError) as err:
            raise ValueError(f"failed to construct revisions of DaemonSet: {_text(err)}") from err
        hash_value = (current["metadata"].get("labels") or {}).get(util.UNIQUE_LABEL, "")
        if not self.expectations.satisfied(key):
            await self._update_status(ds, selector, nodes, hash_value, False)
            return
        failure: Exception | None = None
        try:
            await self._update_daemon_set(ds, selector, nodes, hash_value, key, old)
        except (errors.StatusError, ValueError) as err:
            failure = err
        try:
            await self._update_status(ds, selector, nodes, hash_value, True)
        except errors.StatusError as err:
            if failure is None:
                raise
            log.error("DaemonSet %s: could not update status: %s", key, err.message)
        if failure is not None:
            raise failure

    def _can_adopt(self, ds: Object) -> Callable[[], Any]:
        meta = ds["metadata"]

        async def fresh() -> Object:
            current = await self._api("daemonsets", meta["namespace"]).get(meta["name"])
            if current["metadata"].get("uid") != meta.get("uid"):
                raise ValueError(
                    f"original DaemonSet {meta['namespace']}/{meta['name']} is gone: got uid "
                    f"{current['metadata'].get('uid')}, wanted {meta.get('uid')}"
                )
            return current

        return recheck_deletion_timestamp(fresh)

    async def _claim(
        self, ds: Object, selector: Selector, resource: str, objects: list[Object]
    ) -> list[Object]:
        async def patch(namespace: str, name: str, body: Object) -> Object:
            return await self._api(resource, namespace).patch(name, body, STRATEGIC_MERGE_PATCH)

        manager = ControllerRefManager(ds, selector, util.API_VERSION, util.KIND, patch, self._can_adopt(ds))
        return await manager.claim(objects)

    async def _nodes_to_daemon_pods(
        self, ds: Object, selector: Selector, include_deleted_terminal: bool = False
    ) -> dict[str, list[Object]]:
        """The claimed pods by the node they are (or are meant to be) on."""
        pods = await self._claim(
            ds, selector, "pods", self.pods.indexer.list(ds["metadata"].get("namespace", ""))
        )
        by_node: dict[str, list[Object]] = {}
        for pod in pods:
            terminal = pod_phase(pod) in ("Succeeded", "Failed")
            if not include_deleted_terminal and terminal and pod["metadata"].get("deletionTimestamp"):
                continue
            node_name = util.target_node_name(pod)
            if node_name is not None:
                by_node.setdefault(node_name, []).append(pod)
        return by_node

    async def _update_daemon_set(
        self,
        ds: Object,
        selector: Selector,
        nodes: list[Object],
        hash_value: str,
        key: str,
        old: list[Object],
    ) -> None:
        await self._manage(ds, selector, nodes, hash_value)
        if self.expectations.satisfied(key):
            strategy = (util.spec(ds).get("updateStrategy") or {}).get("type") or "RollingUpdate"
            if strategy == "RollingUpdate":
                await self._rolling_update(ds, selector, nodes, hash_value)
        try:
            await self._cleanup_history(ds, selector, old)
        except errors.StatusError as err:
            raise ValueError(f"failed to clean up revisions of DaemonSet: {err.message}") from err

    # ---- manage: one daemon per node ----

    async def _manage(self, ds: Object, selector: Selector, nodes: list[Object], hash_value: str) -> None:
        node_pods = await self._nodes_to_daemon_pods(ds, selector)
        creates: list[str] = []
        deletes: list[str] = []
        for node in nodes:
            node_creates, node_deletes = self._pods_should_be_on_node(node, node_pods, ds, hash_value)
            creates += node_creates
            deletes += node_deletes
        existing = {n["metadata"].get("name") for n in nodes}
        for node_name, pods in node_pods.items():  # pinned to nodes that are gone: never scheduled
            if node_name not in existing:
                deletes += [p["metadata"]["name"] for p in pods if not util.spec(p).get("nodeName")]
        await self._sync_nodes(ds, deletes, creates, hash_value)

    def _pods_should_be_on_node(
        self, node: Object, node_pods: dict[str, list[Object]], ds: Object, hash_value: str
    ) -> tuple[list[str], list[str]]:
        should_run, should_continue = util.node_should_run_daemon_pod(node, ds)
        node_name = node["metadata"].get("name", "")
        daemon_pods = node_pods.get(node_name)
        creates: list[str] = []
        deletes: list[str] = []
        if should_run and daemon_pods is None:
            return [node_name], []
        if should_continue:
            running = self._running_after_cleanup(ds, node_name, daemon_pods or [], deletes)
            if not util.allows_surge(ds):
                deletes += [p["metadata"]["name"] for p in _sorted_pods(running)[1:]]
            elif len(running) <= 1:
                if not running and should_run:
                    creates.append(node_name)  # surging: at least one pod not being deleted
            else:
                deletes += self._surge_excess(ds, _sorted_pods(running), hash_value)
        elif daemon_pods:
            deletes += [
                p["metadata"]["name"] for p in daemon_pods if not p["metadata"].get("deletionTimestamp")
            ]
        return creates, deletes

    def _running_after_cleanup(
        self, ds: Object, node_name: str, pods: list[Object], deletes: list[str]
    ) -> list[Object]:
        """The node's live pods; failed ones are deleted (within the node's backoff), succeeded ones too."""
        running = []
        namespace = ds["metadata"].get("namespace", "")
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            name = pod["metadata"]["name"]
            if pod_phase(pod) == "Failed":
                backoff_key = f"{ds['metadata'].get('uid')}/{(ds.get('status') or {}).get('observedGeneration', 0)}/{node_name}"
                now = self.clock()
                if self.failed_pods_backoff.in_backoff_since_update(backoff_key, now):
                    self.queue.add_after(object_key(ds), self.failed_pods_backoff.get(backoff_key))
                    continue
                self.failed_pods_backoff.next(backoff_key, now)
                self.recorder.event(
                    ds,
                    WARNING,
                    FAILED_DAEMON_POD_REASON,
                    f"Found failed daemon pod {namespace}/{name} on node {node_name}, will try to kill it",
                )
                deletes.append(name)
            elif pod_phase(pod) == "Succeeded":
                self.recorder.event(
                    ds,
                    NORMAL,
                    SUCCEEDED_DAEMON_POD_REASON,
                    f"Found succeeded daemon pod {namespace}/{name} on node {node_name}, "
                    "will try to delete it",
                )
                deletes.append(name)
            else:
                running.append(pod)
        return running

    def _surge_excess(self, ds: Object, running: list[Object], hash_value: str) -> list[str]:
        """With surge, two pods may share a node: the oldest new one while it is not yet available and the
        oldest old one while it is ready; the rest go."""
        deletes: list[str] = []
        oldest_new = oldest_old = None
        generation = util.template_generation(ds)
        for pod in running:
            if util.is_pod_updated(pod, hash_value, generation) and oldest_new is None:
                oldest_new = pod
            elif not util.is_pod_updated(pod, hash_value, generation) and oldest_old is None:
                oldest_old = pod
            else:
                deletes.append(pod["metadata"]["name"])
        if oldest_new is not None and oldest_old is not None:
            if not is_pod_ready(oldest_old) or is_pod_available(
                oldest_new, util.min_ready_seconds(ds), self.clock()
            ):
                deletes.append(oldest_old["metadata"]["name"])
        return deletes

    async def _sync_nodes(self, ds: Object, deletes: list[str], creates: list[str], hash_value: str) -> None:
        """syncNodes: creates in slow-start batches and deletes, at most BURST_REPLICAS of each, expected
        before they are sent."""
        key = object_key(ds)
        creates, deletes = creates[:BURST_REPLICAS], deletes[:BURST_REPLICAS]
        self.expectations.set(key, len(creates), len(deletes))
        namespace = ds["metadata"]["namespace"]
        template = util.create_pod_template(util.template_of(ds), util.template_generation(ds), hash_value)
        ref = new_controller_ref(ds, util.API_VERSION, util.KIND)
        failures: list[BaseException] = []
        position = 0
        for size in slow_start_batch(len(creates)):
            batch = creates[position : position + size]
            position += size
            results = await asyncio.gather(
                *(self._create_on(namespace, template, ds, ref, n) for n in batch), return_exceptions=True
            )
            batch_failures = [r for r in results if isinstance(r, BaseException)]
            for failure in batch_failures:
                self.expectations.creation_observed(key)
                if not _namespace_terminating(failure):
                    failures.append(failure)
            if batch_failures:
                self.expectations.lower(key, len(creates) - position, 0)  # never sent: not waited for
                break
        results = await asyncio.gather(
            *(self.pod_control.delete_pod(namespace, name, ds) for name in deletes), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                self.expectations.deletion_observed(key)
                if not (isinstance(result, errors.StatusError) and result.code == 404):
                    failures.append(result)
        if failures:
            raise failures[0]

    async def _create_on(
        self, namespace: str, template: Object, ds: Object, ref: Object, node_name: str
    ) -> None:
        pinned = {**template, "spec": dict(template.get("spec") or {})}
        pinned["spec"]["affinity"] = _copy_affinity(pinned["spec"].get("affinity"))
        util.pin_to_node(pinned["spec"], node_name)
        await self.pod_control.create_pods(namespace, pinned, ds, ref)

    # ---- rolling update ----

    async def _rolling_update(
        self, ds: Object, selector: Selector, nodes: list[Object], hash_value: str
    ) -> None:
        node_pods = await self._nodes_to_daemon_pods(ds, selector)
        desired = 0
        for node in nodes:
            if util.node_should_run_daemon_pod(node, ds)[0]:
                desired += 1
                node_pods.setdefault(node["metadata"].get("name", ""), [])
        try:
            max_unavailable = util.unavailable_count(ds, desired)
            max_surge = util.surge_count(ds, desired)
        except ValueError as err:
            raise ValueError(f"couldn't get unavailable numbers: {err}") from err
        if desired > 0 and max_unavailable == 0 and max_surge == 0:
            max_unavailable = 1  # an impossible configuration: accept unavailability
        if max_surge == 0:
            await self._sync_nodes(
                ds,
                self._replace_within_unavailability(ds, node_pods, hash_value, max_unavailable),
                [],
                hash_value,
            )
        else:
            deletes, creates = self._surge(ds, node_pods, hash_value, max_surge, desired)
            await self._sync_nodes(ds, deletes, creates, hash_value)

    def _updated_pods_on_node(
        self, ds: Object, pods: list[Object], hash_value: str
    ) -> tuple[Object | None, Object | None, bool]:
        """findUpdatedPodsOnNode: (new, old, at most one of each)."""
        new = old = None
        generation = util.template_generation(ds)
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            if util.is_pod_updated(pod, hash_value, generation):
                if new is not None:
                    return None, None, False
                new = pod
            else:
                if old is not None:
                    return None, None, False
                old = pod
        return new, old, True

    def _replace_within_unavailability(
        self, ds: Object, node_pods: dict[str, list[Object]], hash_value: str, max_unavailable: int
    ) -> list[str]:
        """Old pods deleted so that no more than maxUnavailable daemons are down; unavailable old pods
        are replaced whatever the budget."""
        now, min_ready = self.clock(), util.min_ready_seconds(ds)
        unavailable = 0
        allowed: list[str] = []
        candidates: list[str] = []
        for pods in node_pods.values():
            new, old, ok = self._updated_pods_on_node(ds, pods, hash_value)
            if not ok or (new is None) == (old is None):
                unavailable += 1  # the manage loop creates or prunes here
            elif new is not None:
                unavailable += not is_pod_available(new, min_ready, now)
            elif old is not None and not is_pod_available(old, min_ready, now):
                allowed.append(old["metadata"]["name"])
                unavailable += 1
            elif old is not None and unavailable < max_unavailable:
                candidates.append(old["metadata"]["name"])
        remaining = max(0, min(max_unavailable - unavailable, len(candidates)))
        return allowed + candidates[:remaining]

    def _surge(
        self, ds: Object, node_pods: dict[str, list[Object]], hash_value: str, max_surge: int, desired: int
    ) -> tuple[list[str], list[str]]:
        """New pods beside old ones, up to maxSurge at a time; an old pod goes once its new one is
        available, or at once when it is unavailable itself."""
        now, min_ready = self.clock(), util.min_ready_seconds(ds)
        deletes: list[str] = []
        should_not_run: list[str] = []
        candidates: list[str] = []
        allowed: list[str] = []
        surge = available = 0
        for node_name, pods in node_pods.items():
            new, old, ok = self._updated_pods_on_node(ds, pods, hash_value)
            if not ok:
                surge += 1
                continue
            counted = old if old is not None else new
            available += counted is not None and is_pod_available(counted, min_ready, now)
            if old is None:
                continue
            node = self.nodes.indexer.get(node_name)
            should_run = node is not None and util.node_should_run_daemon_pod(node, ds)[0]
            if new is None and not is_pod_available(old, min_ready, now):
                (allowed if should_run else deletes).append(
                    node_name if should_run else old["metadata"]["name"]
                )
            elif new is None:
                if not should_run:
                    should_not_run.append(old["metadata"]["name"])
                elif surge < max_surge:
                    candidates.append(node_name)
            elif not is_pod_available(new, min_ready, now):
                surge += 1
            else:
                deletes.append(old["metadata"]["name"])
        deletable = min(available - desired, len(should_not_run))
        if deletable > 0:
            deletes += should_not_run[:deletable]
        remaining = max(0, min(max_surge - surge, len(candidates)))
        return deletes, allowed + candidates[:remaining]

    # ---- history ----

    def _matches(self, ds: Object, revision: Object) -> bool:
        return go_json(util.get_patch(ds)) == go_json(revision.get("data"))

    async def _construct_history(self, ds: Object, selector: Selector) -> tuple[Object, list[Object]]:
        """constructHistory: the revision matching the template (made if missing, renumbered to be the
        newest, duplicates merged) and the others."""
        namespace = ds["metadata"]["namespace"]
        histories = await self._claim(
            ds, selector, "controllerrevisions", self.revisions.indexer.list(namespace)
        )
        current, old = [], []
        for history in histories:
            if util.UNIQUE_LABEL not in (history["metadata"].get("labels") or {}):
                labels = {
                    **(history["metadata"].get("labels") or {}),
                    util.UNIQUE_LABEL: history["metadata"]["name"],
                }
                history = await self._api("controllerrevisions", namespace).update(
                    {**history, "metadata": {**history["metadata"], "labels": labels}}
                )
            (current if self._matches(ds, history) else old).append(history)
        next_number = max((revision_number(h) for h in old), default=0) + 1
        if not current:
            return await self._snapshot(ds, next_number), old
        keep = await self._dedup_current(ds, selector, current)
        if revision_number(keep) < next_number:
            keep = await self._api("controllerrevisions", namespace).update({**keep, "revision": next_number})
        return keep, old

    async def _dedup_current(self, ds: Object, selector: Selector, current: list[Object]) -> Object:
        if len(current) == 1:
            return current[0]
        keep = current[0]
        for history in current:
            if revision_number(history) >= revision_number(keep):
                keep = history
        keep_hash = (keep["metadata"].get("labels") or {}).get(util.UNIQUE_LABEL, "")
        namespace = ds["metadata"]["namespace"]
        pods = await self._claim(ds, selector, "pods", self.pods.indexer.list(namespace))
        for pod in pods:  # relabelled first, so no live pod points at a deleted duplicate
            if (pod["metadata"].get("labels") or {}).get(util.UNIQUE_LABEL) != keep_hash:
                await self._api("pods", namespace).patch(
                    pod["metadata"]["name"], {"metadata": {"labels": {util.UNIQUE_LABEL: keep_hash}}}
                )
        for history in current:
            if history["metadata"]["name"] != keep["metadata"]["name"]:
                await self._api("controllerrevisions", namespace).delete(history["metadata"]["name"])
        return keep

    async def _snapshot(self, ds: Object, revision: int) -> Object:
        """A new revision named by the template's hash; a name taken by another template raises the
        collision count in the status (and this sync fails, to retry with it)."""
        namespace, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        collision_count = (ds.get("status") or {}).get("collisionCount")
        hash_value = compute_hash(util.template_of(ds), collision_count)
        metadata: Object = {
            "name": f"{name}-{hash_value}",
            "namespace": namespace,
            "labels": {
                **((util.template_of(ds).get("metadata") or {}).get("labels") or {}),
                util.UNIQUE_LABEL: hash_value,
            },
            "ownerReferences": [new_controller_ref(ds, util.API_VERSION, util.KIND)],
        }
        if ds["metadata"].get("annotations"):
            metadata["annotations"] = dict(ds["metadata"]["annotations"])
        history = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": metadata,
            "data": util.get_patch(ds),
            "revision": revision,
        }
        api = self._api("controllerrevisions", namespace)
        try:
            return await api.create(history)
        except errors.StatusError as err:
            if err.code != 409 or err.reason != "AlreadyExists":
                raise
            existing = await api.get(metadata["name"])
            if self._matches(ds, existing):
                return existing
            current = await self._api("daemonsets", namespace).get(name)
            current_count = (current.get("status") or {}).get("collisionCount")
            if current_count != collision_count:
                raise ValueError(
                    f"found a stale collision count ({collision_count}, expected {current_count}) of "
                    f"DaemonSet {name!r} while processing; will retry until it is updated"
                ) from err
            current.setdefault("status", {})["collisionCount"] = (current_count or 0) + 1
            await self._api("daemonsets", namespace).update_status(current)
            raise

    async def _cleanup_history(self, ds: Object, selector: Selector, old: list[Object]) -> None:
        limit = util.spec(ds).get("revisionHistoryLimit")
        to_kill = len(old) - (DEFAULT_REVISION_HISTORY_LIMIT if limit is None else int(limit))
        if to_kill <= 0:
            return
        node_pods = await self._nodes_to_daemon_pods(ds, selector, include_deleted_terminal=True)
        live = {
            (p["metadata"].get("labels") or {}).get(util.UNIQUE_LABEL)
            for pods in node_pods.values()
            for p in pods
        }
        for history in sorted(old, key=revision_number):
            if to_kill <= 0:
                break
            if (history["metadata"].get("labels") or {}).get(util.UNIQUE_LABEL) in live:
                continue
            await self._api("controllerrevisions", ds["metadata"]["namespace"]).delete(
                history["metadata"]["name"]
            )
            to_kill -= 1

    # ---- status ----

    async def _update_status(
        self,
        ds: Object,
        selector: Selector,
        nodes: list[Object],
        hash_value: str,
        update_observed_generation: bool,
    ) -> None:
        node_pods = await self._nodes_to_daemon_pods(ds, selector)
        counts = dict.fromkeys(
            (
                "desiredNumberScheduled",
                "currentNumberScheduled",
                "numberMisscheduled",
                "numberReady",
                "updatedNumberScheduled",
                "numberAvailable",
            ),
            0,
        )
        now, min_ready, generation = self.clock(), util.min_ready_seconds(ds), util.template_generation(ds)
        for node in nodes:
            should_run, _ = util.node_should_run_daemon_pod(node, ds)
            pods = node_pods.get(node["metadata"].get("name", "")) or []
            if not should_run:
                counts["numberMisscheduled"] += bool(pods)
                continue
            counts["desiredNumberScheduled"] += 1
            if not pods:
                continue
            counts["currentNumberScheduled"] += 1
            pod = _sorted_pods(pods)[0]  # the oldest
            if is_pod_ready(pod):
                counts["numberReady"] += 1
                counts["numberAvailable"] += is_pod_available(pod, min_ready, now)
            counts["updatedNumberScheduled"] += util.is_pod_updated(pod, hash_value, generation)
        counts["numberUnavailable"] = counts["desiredNumberScheduled"] - counts["numberAvailable"]
        await self._store_status(ds, counts, update_observed_generation)
        if min_ready > 0 and counts["numberReady"] != counts["numberAvailable"]:
            self.queue.add_after(object_key(ds), float(min_ready))

    async def _store_status(self, ds: Object, counts: Object, update_observed_generation: bool) -> None:
        status = ds.get("status") or {}
        generation = ds["metadata"].get("generation", 0)
        if (
            all((status.get(k) or 0) == v for k, v in counts.items())
            and (status.get("observedGeneration") or 0) >= generation
        ):
            return
        api = self._api("daemonsets", ds["metadata"]["namespace"])
        to_update = ds
        for attempt in range(STATUS_UPDATE_RETRIES + 1):
            new_status = {**(to_update.get("status") or {}), **counts}
            if update_observed_generation:
                new_status["observedGeneration"] = generation
            try:
                await api.update_status({**to_update, "status": new_status})
                return
            except errors.StatusError:
                if attempt >= STATUS_UPDATE_RETRIES:
                    raise
                to_update = await api.get(ds["metadata"]["name"])


def _copy_affinity(affinity: Any) -> Any:
    """The template's affinity, copied deep enough that pinning one pod leaves the template alone."""
    if not isinstance(affinity, dict):
        return affinity
    node_affinity = affinity.get("nodeAffinity")
    if not isinstance(node_affinity, dict):
        return dict(affinity)
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    node_affinity = {**node_affinity}
    if isinstance(required, dict):
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = dict(required)
    return {**affinity, "nodeAffinity": node_affinity}


def _text(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def _namespace_terminating(err: BaseException) -> bool:
    if not isinstance(err, errors.StatusError):
        return False
    return any(c.get("type") == "NamespaceTerminating" for c in (err.details or {}).get("causes") or ())
