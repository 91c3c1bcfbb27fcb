"""The scheduler (pkg/scheduler schedule_one.go): one loop pops the next pod, filters the nodes
through the plugins, scores the feasible ones, picks the best (ties at random), assumes the pod on it
in the cache and binds it through pods/binding in its own task, so the next pod is scheduled while
the binding is written. A pod no node fits gets the PodScheduled=False condition (reason
Unschedulable and the FitError message) and a FailedScheduling event, and waits in the queue for a
cluster event that may help.

Only pods of `scheduler_name` (the default, "default-scheduler") without a node are scheduled. Left
out: preemption (the message says what DefaultPreemption says when it finds no victims), nominated
nodes, volume binding (pods with unbound PVCs are scheduled as if they had none), extenders, profiles
other than the default one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from ..apimachinery import errors
from ..apimachinery.labels import (
    Selector,
    SelectorParseError,
    selector_from_label_selector,
    selector_from_set,
)
from ..apimachinery.meta import now_rfc3339
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.rest import STRATEGIC_MERGE_PATCH, Client
from .cache import Cache
from .events import EventRecorder
from .framework.interface import Plugin
from .framework.nodeinfo import NodeInfo
from .framework.plugins import default_plugins
from .framework.plugins.interpod_affinity import InterPodAffinity
from .framework.plugins.pod_topology_spread import PodTopologySpread
from .framework.runtime import FitError, Framework
from .queue import FLUSH_BACKOFF_EVERY, FLUSH_UNSCHEDULABLE_EVERY, QueuedPodInfo, SchedulingQueue

log = logging.getLogger("kube_apiserver.scheduler")
Object = dict[str, Any]
DEFAULT_SCHEDULER_NAME = "default-scheduler"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
UNSCHEDULABLE, SCHEDULER_ERROR = "Unschedulable", "SchedulerError"
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# A node change other than these (heartbeats, conditions, images) cannot make a pod fit.
NODE_FIELDS_THAT_MATTER = (
    ("metadata", "labels"),
    ("spec", "taints"),
    ("spec", "unschedulable"),
    ("status", "allocatable"),
)
# A pod placed on a node can only help pods rejected by these (AssignedPodAdd's interested plugins).
PLUGINS_HELPED_BY_A_BOUND_POD = frozenset({"InterPodAffinity", "PodTopologySpread"})


def _assigned(pod: Object) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _terminal(pod: Object) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def num_feasible_nodes_to_find(num_all_nodes: int) -> int:
    """The adaptive percentageOfNodesToScore: every node up to 100, then 50% less 1% per 125 nodes."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def _node_changed(old: Object, new: Object) -> bool:
    return any((old.get(a) or {}).get(b) != (new.get(a) or {}).get(b) for a, b in NODE_FIELDS_THAT_MATTER)


class Scheduler:
    name = "scheduler"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
        plugins: list[Plugin] | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ):
        self.client = client
        self.scheduler_name = scheduler_name
        self.pods = informers.for_resource("", "v1", "pods")
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.namespaces = informers.for_resource("", "v1", "namespaces")
        # What the default topology spread selects a pod's siblings by (DefaultSelector's listers).
        self.services = informers.for_resource("", "v1", "services")
        self.controllers = {
            ("v1", "ReplicationController"): informers.for_resource("", "v1", "replicationcontrollers"),
            ("apps/v1", "ReplicaSet"): informers.for_resource("apps", "v1", "replicasets"),
            ("apps/v1", "StatefulSet"): informers.for_resource("apps", "v1", "statefulsets"),
        }
        self.informers = (self.pods, self.nodes, self.namespaces, self.services, *self.controllers.values())
        self.cache = Cache(clock)
        self.queue = SchedulingQueue(clock)
        self.framework = Framework(plugins if plugins is not None else self._default_plugins())
        self.recorder = EventRecorder(client, scheduler_name)
        self.rng = rng or random.Random()
        self._next_start_node = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._bindings: set[asyncio.Task[None]] = set()

    def _default_plugins(self) -> list[Plugin]:
        """The default profile, with the plugins that look things up given the informers."""
        with_listers = {
            InterPodAffinity: lambda: InterPodAffinity(self._namespace_labels),
            PodTopologySpread: lambda: PodTopologySpread(self.default_selector),
        }
        return [with_listers[type(p)]() if type(p) in with_listers else p for p in default_plugins()]

    def default_selector(self, pod: Object) -> Selector | None:
        """helper.DefaultSelector: the selectors of the Services selecting the pod merged, and its
        controller's (ReplicationController, ReplicaSet, StatefulSet) added."""
        meta = pod.get("metadata") or {}
        namespace, labels = meta.get("namespace") or "", meta.get("labels") or {}
        merged: dict[str, str] = {}
        for service in self.services.indexer.list(namespace):
            wanted = (service.get("spec") or {}).get("selector")
            if isinstance(wanted, dict) and wanted and selector_from_set(wanted).matches(labels):
                merged.update(wanted)
        selector = selector_from_set(merged)
        owner = next(
            (r for r in meta.get("ownerReferences") or [] if isinstance(r, dict) and r.get("controller")),
            None,
        )
        informer = self.controllers.get((owner.get("apiVersion"), owner.get("kind"))) if owner else None
        found = informer.indexer.get_by_name(namespace, owner.get("name", "")) if informer and owner else None
        if found is None:
            return selector
        wanted = (found.get("spec") or {}).get("selector")
        if owner and owner.get("kind") == "ReplicationController":
            return selector_from_set({**merged, **wanted}) if isinstance(wanted, dict) else selector
        try:
            return selector.add(*selector_from_label_selector(wanted).requirements())
        except (SelectorParseError, AttributeError, TypeError, ValueError):
            return selector

    def _namespace_labels(self, namespace: str) -> dict[str, str] | None:
        found = self.namespaces.indexer.get(namespace)
        return ((found or {}).get("metadata") or {}).get("labels")

    # ---- lifecycle ----

    async def start(self) -> None:
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._delete_pod))
        self.nodes.add_event_handler(EventHandler(self._add_node, self._update_node, self._delete_node))
        for informer in self.informers:
            informer.start()
        self.recorder.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._run()), loop.create_task(self._housekeeping())]

    async def stop(self) -> None:
        self.queue.close()
        tasks, self._tasks = [*self._tasks, *self._bindings], []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.recorder.stop()

    async def _run(self) -> None:
        for informer in self.informers:
            await informer.synced.wait()
        while await self._schedule_one_guarded():
            pass

    async def _schedule_one_guarded(self) -> bool:
        try:
            return await self.schedule_one()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - one pod's failure never stops the loop
            log.exception("Scheduling a pod failed")
            return True

    async def _housekeeping(self) -> None:
        """flushBackoffQCompleted every second, flushUnschedulablePodsLeftover every 30 s, and the
        cache's expiry of assumed pods."""
        since_unschedulable_flush = 0.0
        while True:
            await asyncio.sleep(FLUSH_BACKOFF_EVERY)
            self.queue.flush_backoff_completed()
            self.cache.cleanup_expired_assumed_pods()
            since_unschedulable_flush += FLUSH_BACKOFF_EVERY
            if since_unschedulable_flush >= FLUSH_UNSCHEDULABLE_EVERY:
                since_unschedulable_flush = 0.0
                self.queue.flush_unschedulable_left_over()

    # ---- informer handlers ----

    def responsible_for(self, pod: Object) -> bool:
        return ((pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME) == self.scheduler_name

    def _add_pod(self, pod: Object) -> None:
        if _terminal(pod):
            return
        if _assigned(pod):
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff(PLUGINS_HELPED_BY_A_BOUND_POD)
        elif self.responsible_for(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.add(pod)

    def _update_pod(self, old: Object, new: Object) -> None:
        if _assigned(new):
            if _terminal(new):  # the scheduler's informer does not list terminal pods: a deletion
                if not _terminal(old):
                    self._delete_pod(new)
                return
            self.queue.delete(new)
            newly_bound = not _assigned(old)
            self.cache.update_pod(new)
            if newly_bound:
                self.queue.move_all_to_active_or_backoff(PLUGINS_HELPED_BY_A_BOUND_POD)
            return
        if self.cache.is_assumed(object_key(new)):
            return  # being bound
        if (
            self.responsible_for(new)
            and not (new.get("metadata") or {}).get("deletionTimestamp")
            and not _terminal(new)
        ):
            self.queue.update(new)
        else:
            self.queue.delete(new)

    def _delete_pod(self, pod: Object) -> None:
        if _assigned(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff()
        else:
            self.queue.delete(pod)

    def _add_node(self, node: Object) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff()

    def _update_node(self, old: Object, new: Object) -> None:
        self.cache.update_node(new)
        if _node_changed(old, new):
            self.queue.move_all_to_active_or_backoff()

    def _delete_node(self, node: Object) -> None:
        self.cache.remove_node(node)

    # ---- one scheduling cycle ----

    def _current(self, info: QueuedPodInfo) -> Object | None:
        """The pod as the informer last saw it, unless it no longer needs scheduling."""
        pod = self.pods.indexer.get(info.key)
        if pod is None or _assigned(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return None
        if self.cache.is_assumed(info.key):
            return None
        return pod

    async def schedule_one(self) -> bool:
        """One pod popped and placed or failed; False once the queue is closed."""
        info = await self.queue.pop()
        if info is None:
            return False
        pod = self._current(info)
        if pod is None:
            self.queue.done(info)
            return True
        info.pod = pod
        cycle = self.queue.scheduling_cycle
        try:
            host = self.schedule_pod(pod)
        except FitError as err:
            info.unschedulable_plugins = {s.plugin for s in err.diagnosis.node_statuses.values() if s.plugin}
            await self._handle_failure(info, pod, UNSCHEDULABLE, str(err), cycle)
            return True
        except _NoNodes:
            await self._handle_failure(info, pod, UNSCHEDULABLE, NO_NODES_AVAILABLE, cycle)
            return True
        except RuntimeError as err:
            await self._handle_failure(info, pod, SCHEDULER_ERROR, str(err), cycle)
            return True
        assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": host}}
        self.cache.assume_pod(assumed)
        self.queue.done(info)
        task = asyncio.get_running_loop().create_task(self._bind(info, pod, assumed, host))
        self._bindings.add(task)
        task.add_done_callback(self._bindings.discard)
        return True

    def schedule_pod(self, pod: Object) -> str:
        """The node the pod goes to; FitError, _NoNodes or RuntimeError (a plugin's error) if none."""
        nodes = self.cache.node_infos()
        if not nodes:
            raise _NoNodes
        state, feasible, processed = self.framework.find_nodes_that_fit(
            pod, self._rotated(nodes), num_feasible_nodes_to_find(len(nodes))
        )
        self._next_start_node = (self._next_start_node + processed) % len(nodes)
        if len(feasible) == 1:
            return feasible[0].name
        scores = self.framework.score_nodes(state, pod, feasible)
        return self._select_host(scores)

    def _rotated(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
        """Each cycle starts where the last stopped (nextStartNodeIndex), so big clusters are evenly searched."""
        start = self._next_start_node % len(nodes)
        return nodes[start:] + nodes[:start]

    def _select_host(self, scores: dict[str, int]) -> str:
        """The highest score; ties broken uniformly at random (selectHost's reservoir sampling)."""
        best = max(scores.values())
        return self.rng.choice([name for name, score in scores.items() if score == best])

    # ---- binding ----

    async def _bind(self, info: QueuedPodInfo, pod: Object, assumed: Object, host: str) -> None:
        meta = pod.get("metadata") or {}
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {
                "name": meta.get("name"),
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
            },
            "target": {"kind": "Node", "name": host},
        }
        pods = self.client.resource("", "v1", "pods").namespace(meta.get("namespace") or "")
        try:
            await pods.create(binding, subresource="binding", name=meta.get("name") or "")
        except (errors.StatusError, OSError) as err:
            self.cache.forget_pod(assumed)
            self.queue.move_all_to_active_or_backoff()  # the resources it held are free again
            await self._handle_failure(info, pod, SCHEDULER_ERROR, f"binding rejected: {err}", None)
            return
        self.cache.finish_binding(assumed)
        self.recorder.eventf(
            pod,
            "Normal",
            "Scheduled",
            "Binding",
            f"Successfully assigned {meta.get('namespace')}/{meta.get('name')} to {host}",
        )

    # ---- failures ----

    async def _handle_failure(
        self, info: QueuedPodInfo, pod: Object, reason: str, message: str, cycle: int | None
    ) -> None:
        """handleSchedulingFailure: requeue (unless the pod is gone or placed meanwhile), the
        FailedScheduling event and the PodScheduled condition."""
        current = self.pods.indexer.get(info.key)
        if current is None or _assigned(current):
            self.queue.delete(pod)
            return
        if reason == UNSCHEDULABLE and cycle is not None:
            self.queue.add_unschedulable_if_not_present(info, cycle)
        else:
            self.queue.requeue_after_error(info)
        log.info("Unable to schedule pod %s: %s", info.key, message)
        self.recorder.eventf(pod, "Warning", "FailedScheduling", "Scheduling", message)
        await self._update_pod_condition(current, reason, message)

    async def _update_pod_condition(self, pod: Object, reason: str, message: str) -> None:
        """updatePod: PodScheduled=False with the reason and message, patched only if they changed."""
        conditions = (pod.get("status") or {}).get("conditions") or []
        old = next((c for c in conditions if isinstance(c, dict) and c.get("type") == "PodScheduled"), None)
        if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == (
            "False",
            reason,
            message,
        ):
            return
        changed = old is None or old.get("status") != "False"
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339() if changed else old.get("lastTransitionTime"),
            "reason": reason,
            "message": message,
        }
        meta = pod.get("metadata") or {}
        pods = self.client.resource("", "v1", "pods").namespace(meta.get("namespace") or "")
        patch = {"metadata": {"uid": meta.get("uid")}, "status": {"conditions": [condition]}}
        with contextlib.suppress(errors.StatusError, OSError):
            await pods.patch(meta.get("name") or "", patch, STRATEGIC_MERGE_PATCH, subresource="status")


class _NoNodes(Exception):
    """ErrNoNodesAvailable."""
