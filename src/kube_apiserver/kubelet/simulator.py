"""The node-simulator: one controller playing the kubelet of every simulated node (those it registers,
sim-node-0..N-1, and any Node annotated kwok.x-k8s.io/node=fake). Per node it renews the node's Lease every
quarter of its duration and writes the node's status when it changes (or once a status report period
passed); per pod bound to such a node it writes the pod's next status (kubelet/pods.py) when it differs,
and deletes a deleted pod once its containers stopped, as kubelet does (grace 0, with the pod's UID as
precondition). One work queue and a few workers carry every node and pod: the work is bounded by what
changed, and what is due later waits in the queue's timers."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..apimachinery import errors
from ..apimachinery.clock import wall_time
from ..apimachinery.meta import parse_time
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.record import EventBroadcaster, EventRecorder, EventSource
from ..client.rest import Client
from ..client.workqueue import WorkQueue, run_worker
from .config import TERMINATION_SECONDS_ANNOTATION, NodesConfiguration
from .nodes import (
    NODE_LEASE_NAMESPACE,
    internal_ip,
    is_simulated,
    micro_time,
    new_lease,
    new_node,
    node_name,
    node_status,
    pod_cidr_base,
    without_heartbeats,
)
from .pods import Host, next_status

log = logging.getLogger("kube_apiserver.kubelet")
Object = dict[str, Any]
Key = tuple[str, str]  # ("node", name) or ("pod", namespace/name)
NAME = "node-simulator"
REGISTER_RETRY_SECONDS = 1.0
TERMINAL = ("Succeeded", "Failed")


def _node_of(pod: Object) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


class NodeSimulator:
    name = NAME

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        config: NodesConfiguration,
        events: EventBroadcaster | None = None,
        workers: int = 5,
        clock: Callable[[], float] = wall_time,
    ):
        """`events`: where each node's kubelet records its pods' events (None: none are recorded)."""
        self.client = client
        self.events = events
        self.recorders: dict[str, EventRecorder] = {}
        self.config = config
        self.clock = clock
        self.workers = workers
        self.nodes = informers.for_resource("", "v1", "nodes")
        self.pods = informers.for_resource("", "v1", "pods")
        self.informers = (self.nodes, self.pods)
        self.queue: WorkQueue[Key] = WorkQueue(NAME)
        self.pods_by_node: dict[str, set[str]] = {}
        self.leases: dict[str, Object] = {}  # the Lease each node last wrote
        self.renewed: dict[str, float] = {}
        self.reported: dict[str, float] = {}  # when each node's status was last written
        self.pod_ips: dict[str, dict[str, str]] = {}  # node -> pod uid -> address
        # What was last written per key, with the resourceVersion it got: an object still at that version
        # needs no write even if the server spelled its status differently (no write loop).
        self.sent: dict[Key, tuple[str, Object]] = {}
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def renew_interval(self) -> float:
        return self.config.lease_duration_seconds / 4  # kubelet renews at a quarter of the duration

    # ---- lifecycle (QueueController's, with a registration task) ----

    async def start(self) -> None:
        self.nodes.add_event_handler(EventHandler(self._node_changed, self._node_updated, self._node_deleted))
        self.pods.add_event_handler(EventHandler(self._pod_changed, self._pod_updated, self._pod_deleted))
        for informer in self.informers:
            informer.start()
        loop = asyncio.get_running_loop()
        runs: Sequence[Callable[[], Awaitable[None]]] = [self._work] * self.workers + [self._register]
        self._tasks = [loop.create_task(self._after_sync(run)) for run in runs]

    async def _after_sync(self, run: Callable[[], Awaitable[None]]) -> None:
        for informer in self.informers:
            await informer.synced.wait()
        await run()

    async def _work(self) -> None:
        await run_worker(self.queue, self.sync, f"{NAME} controller")

    async def stop(self) -> None:
        self.queue.shut_down()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ---- informer handlers ----

    def _node_changed(self, node: Object) -> None:
        if is_simulated(node):
            name = node["metadata"]["name"]
            self.queue.add(("node", name))
            for key in self.pods_by_node.get(name, ()):
                self.queue.add(("pod", key))

    def _node_updated(self, old: Object, new: Object) -> None:
        self._node_changed(new)

    def _node_deleted(self, node: Object) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        for state in (self.leases, self.renewed, self.reported, self.pod_ips, self.recorders):
            state.pop(name, None)
        self.sent.pop(("node", name), None)

    def _pod_changed(self, pod: Object) -> None:
        node = _node_of(pod)
        if not node:
            return
        key = object_key(pod)
        self.pods_by_node.setdefault(node, set()).add(key)
        if is_simulated(self.nodes.indexer.get(node)):
            self.queue.add(("pod", key))

    def _pod_updated(self, old: Object, new: Object) -> None:
        self._pod_changed(new)

    def _pod_deleted(self, pod: Object) -> None:
        node, key = _node_of(pod), object_key(pod)
        keys = self.pods_by_node.get(node)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self.pods_by_node[node]
        self.pod_ips.get(node, {}).pop((pod.get("metadata") or {}).get("uid", ""), None)
        self.sent.pop(("pod", key), None)

    # ---- registration ----

    async def _register(self) -> None:
        """Creates sim-node-0..N-1, or adopts those that exist; retried until every one is there."""
        pending = [node_name(i) for i in range(self.config.simulated_nodes)]
        while pending:
            failed = []
            for name in pending:
                try:
                    await self._register_node(name)
                except errors.StatusError as err:
                    log.info("%s: registering node %s failed: %s", NAME, name, err.message)
                    failed.append(name)
            pending = failed
            if pending:
                await asyncio.sleep(REGISTER_RETRY_SECONDS)

    async def _register_node(self, name: str) -> None:
        nodes = self.client.resource("", "v1", "nodes")
        try:
            await nodes.create(new_node(name))
            return
        except errors.StatusError as err:
            if err.code != 409:
                raise
        existing = self.nodes.indexer.get(name) or await nodes.get(name)
        if not is_simulated(existing):
            annotations = new_node(name)["metadata"]["annotations"]
            await nodes.patch(name, {"metadata": {"annotations": annotations}})

    # ---- syncs ----

    async def sync(self, key: Key) -> None:
        kind, name = key
        if kind == "node":
            await self._sync_node(name)
        else:
            await self._sync_pod(name)

    async def _sync_node(self, name: str) -> None:
        node = self.nodes.indexer.get(name)
        if not is_simulated(node):
            return
        assert node is not None
        now = self.clock()
        report = now - self.reported.get(name, float("-inf")) >= self.config.status_report_seconds
        status = node_status(node, now, heartbeat=report)
        if report or not self._unchanged(
            ("node", name), node, without_heartbeats(status), without_heartbeats
        ):
            patched = await self.client.resource("", "v1", "nodes").patch(
                name, {"status": status}, subresource="status"
            )
            self._remember(("node", name), patched, without_heartbeats(status))
            self.reported[name] = now
        self.queue.add_after(("node", name), self.renew_interval)
        if now - self.renewed.get(name, float("-inf")) >= self.renew_interval * 0.9:
            # after the status: a missing kube-node-lease namespace holds back only the lease
            await self._renew_lease(node, now)
            self.renewed[name] = now

    def _unchanged(
        self, key: Key, obj: Object, status: Object, normalize: Callable[[Object], Object] = lambda s: s
    ) -> bool:
        if normalize(obj.get("status") or {}) == status:
            return True
        sent = self.sent.get(key)
        version = (obj.get("metadata") or {}).get("resourceVersion")
        return sent is not None and sent == (version, status)

    def _remember(self, key: Key, written: Object, status: Object) -> None:
        self.sent[key] = ((written.get("metadata") or {}).get("resourceVersion") or "", status)

    async def _renew_lease(self, node: Object, now: float) -> None:
        name = node["metadata"]["name"]
        leases = self.client.resource("coordination.k8s.io", "v1", "leases").namespace(NODE_LEASE_NAMESPACE)
        lease = self.leases.get(name)
        try:
            if lease is None:
                try:
                    lease = await leases.get(name)
                except errors.StatusError as err:
                    if err.code != 404:
                        raise
                    self.leases[name] = await leases.create(
                        new_lease(node, now, self.config.lease_duration_seconds)
                    )
                    return
            renewed = copy.deepcopy(lease)
            renewed["spec"].update(
                holderIdentity=name,
                leaseDurationSeconds=self.config.lease_duration_seconds,
                renewTime=micro_time(now),
            )
            self.leases[name] = await leases.update(renewed)
        except errors.StatusError:
            self.leases.pop(name, None)  # a conflict or a lease gone: read it afresh next time
            raise

    async def _sync_pod(self, key: str) -> None:
        pod = self.pods.indexer.get(key)
        if pod is None:
            return
        node = _node_of(pod)
        if not is_simulated(self.nodes.indexer.get(node)):
            return
        now = self.clock()
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            await self._terminate(key, pod, now)
            return
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            return
        step = next_status(
            pod, Host(node, internal_ip(node), self._pod_ip(node, pod)), now, self.config.pod_run_seconds
        )
        if not self._unchanged(("pod", key), pod, step.status):
            namespace, name = key.split("/", 1)
            pods = self.client.resource("", "v1", "pods").namespace(namespace)
            try:
                patched = await pods.patch(name, {"status": step.status}, subresource="status")
            except errors.StatusError as err:
                if err.code == 404:
                    return  # gone meanwhile
                raise
            self._remember(("pod", key), patched, step.status)
            self._record(node, patched, step.events)
        if step.wake_at is not None:
            self.queue.add_after(("pod", key), max(0.0, step.wake_at - now))

    def _record(self, node: str, pod: Object, events: list[tuple[str, str, str, str]]) -> None:
        """The events of the step just written, from the node's kubelet (source component kubelet, host the
        node), about the container each names."""
        if self.events is None or not events:
            return
        recorder = self.recorders.get(node)
        if recorder is None:
            recorder = self.recorders[node] = self.events.new_recorder(EventSource("kubelet", node))
        for event_type, reason, message, field_path in events:
            recorder.event(pod, event_type, reason, message, field_path=field_path)

    def _pod_ip(self, node: str, pod: Object) -> str:
        """The pod's address in its node's /24: the one it has, else the lowest free one (the node's own for
        a pod on the host's network)."""
        if (pod.get("spec") or {}).get("hostNetwork"):
            return internal_ip(node)  # the node's own network
        uid = (pod.get("metadata") or {}).get("uid", "")
        given = self.pod_ips.setdefault(node, {})
        if uid in given:
            return given[uid]
        base = pod_cidr_base(node)
        current = (pod.get("status") or {}).get("podIP") or ""
        if not current.startswith(base + "."):
            used = set(given.values())
            for other in self.pods_by_node.get(node, ()):
                ip = ((self.pods.indexer.get(other) or {}).get("status") or {}).get("podIP")
                if ip:
                    used.add(ip)
            free = (f"{base}.{host}" for host in range(2, 255) if f"{base}.{host}" not in used)
            current = next(free, f"{base}.254")
        given[uid] = current
        return current

    async def _terminate(self, key: str, pod: Object, now: float) -> None:
        """The containers stop on SIGTERM at once (or after the termination-seconds annotation, within the
        grace period); then the pod is deleted for good, as kubelet does once they stopped."""
        meta = pod["metadata"]
        grace = float(meta.get("deletionGracePeriodSeconds") or 0)
        deadline = parse_time(meta.get("deletionTimestamp")) or now
        annotations = meta.get("annotations") or {}
        try:
            slow = max(0.0, float(annotations.get(TERMINATION_SECONDS_ANNOTATION) or 0))
        except ValueError:
            slow = 0.0
        stopped_at = deadline - grace + min(grace, slow)
        if now < stopped_at:
            self.queue.add_after(("pod", key), stopped_at - now)
            return
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        self._record(
            _node_of(pod),
            pod,
            [
                (
                    "Normal",
                    "Killing",
                    f"Stopping container {s.get('name', '')}",
                    f"spec.containers{{{s.get('name', '')}}}",
                )
                for s in statuses
                if "running" in (s.get("state") or {})
            ],
        )
        namespace, name = key.split("/", 1)
        options = {"gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid")}}
        try:
            await self.client.resource("", "v1", "pods").namespace(namespace).delete(name, options)
        except errors.StatusError as err:
            if err.code not in (404, 409):
                raise
