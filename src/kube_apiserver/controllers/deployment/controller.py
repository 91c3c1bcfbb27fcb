"""The deployment controller (pkg/controller/deployment/deployment_controller.go): informer handlers
that queue a Deployment when it, one of its ReplicaSets, or (for Recreate) the last of its pods
changes, and syncDeployment, which claims the ReplicaSets and dispatches: status only while being
deleted, scaling when paused or only spec.replicas changed, a rollback asked by the deprecated
annotation, else a rollout by the strategy."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from ...apimachinery.clock import wall_time
from ...apimachinery.labels import SelectorParseError, selector_from_label_selector
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import EventRecorder
from ...client.rest import STRATEGIC_MERGE_PATCH, Client
from ...client.workqueue import WorkQueue
from ..controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from ..controller_utils import controller_of, controllers_selecting
from ..queue_controller import QueueController
from . import util
from .recreate import RecreateMixin
from .rollback import RollbackMixin
from .rolling import RollingMixin
from .sync import WARNING, get_rollback_to

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
COMPONENT = "deployment-controller"
CONCURRENT_DEPLOYMENT_SYNCS = 5  # kube-controller-manager's --concurrent-deployment-syncs


class DeploymentController(RollingMixin, RecreateMixin, RollbackMixin, QueueController):
    name = "deployment"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        workers: int = CONCURRENT_DEPLOYMENT_SYNCS,
        clock: Callable[[], float] = wall_time,
    ):
        self.deployments = informers.for_resource("apps", "v1", "deployments")
        self.replica_sets = informers.for_resource("apps", "v1", "replicasets")
        self.pods = informers.for_resource("", "v1", "pods")
        super().__init__(client, self.replica_sets, recorder, WorkQueue("deployment"), clock)
        self.workers = workers
        self.informers = (self.deployments, self.replica_sets, self.pods)

    # ---- lifecycle ----

    def register_handlers(self) -> None:
        self.deployments.add_event_handler(
            EventHandler(self._add_deployment, self._update_deployment, self._delete_deployment)
        )
        self.replica_sets.add_event_handler(
            EventHandler(self._add_replica_set, self._update_replica_set, self._delete_replica_set)
        )
        self.pods.add_event_handler(EventHandler(None, None, self._delete_pod))

    # ---- informer handlers ----

    def _enqueue(self, d: Object) -> None:
        self.queue.add(object_key(d))

    def _add_deployment(self, d: Object) -> None:
        self._enqueue(d)

    def _update_deployment(self, _old: Object, new: Object) -> None:
        self._enqueue(new)

    def _delete_deployment(self, d: Object) -> None:
        self._enqueue(d)

    def _resolve(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != "Deployment":
            return None
        d = self.deployments.indexer.get_by_name(namespace, ref.get("name", ""))
        if d is None or d["metadata"].get("uid") != ref.get("uid"):
            return None
        return d

    def _deployments_selecting(self, rs: Object) -> list[Object]:
        """GetDeploymentsForReplicaSet: the Deployments whose selector matches an orphan set's labels."""
        if not rs["metadata"].get("labels"):
            return []
        return controllers_selecting(rs, self.deployments.indexer.list(rs["metadata"].get("namespace", "")),
                                     lambda d: selector_from_label_selector(util.spec(d).get("selector")))

    def _add_replica_set(self, rs: Object) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._delete_replica_set(rs)  # a restarted controller sees a set being deleted as an add
            return
        ref = controller_of(rs)
        if ref is not None:
            d = self._resolve(rs["metadata"].get("namespace", ""), ref)
            if d is not None:
                self._enqueue(d)
            return
        for d in self._deployments_selecting(rs):  # an orphan: whoever matches may adopt it
            self._enqueue(d)

    def _update_replica_set(self, old: Object, new: Object) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return  # a resync
        namespace = new["metadata"].get("namespace", "")
        new_ref, old_ref = controller_of(new), controller_of(old)
        ref_changed = new_ref != old_ref
        if ref_changed and old_ref is not None:
            d = self._resolve(namespace, old_ref)
            if d is not None:
                self._enqueue(d)
        if new_ref is not None:
            d = self._resolve(namespace, new_ref)
            if d is not None:
                self._enqueue(d)
            return
        if ref_changed or old["metadata"].get("labels") != new["metadata"].get("labels"):
            for d in self._deployments_selecting(new):
                self._enqueue(d)

    def _delete_replica_set(self, rs: Object) -> None:
        ref = controller_of(rs)
        if ref is None:
            return
        d = self._resolve(rs["metadata"].get("namespace", ""), ref)
        if d is not None:
            self._enqueue(d)

    def _delete_pod(self, pod: Object) -> None:
        """A Recreate Deployment waits for its old pods to be gone: the last one going wakes it."""
        d = self._deployment_for_pod(pod)
        if d is None or util.strategy_type(d) != util.RECREATE:
            return
        rs_list = [
            rs
            for rs in self.replica_sets.indexer.list(d["metadata"]["namespace"])
            if (controller_of(rs) or {}).get("uid") == d["metadata"]["uid"]
        ]
        try:
            pod_map = self._pod_map(d, rs_list)
        except (SelectorParseError, ValueError):
            return
        if not any(pod_map.values()):
            self._enqueue(d)

    def _deployment_for_pod(self, pod: Object) -> Object | None:
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        namespace = pod["metadata"].get("namespace", "")
        rs = self.replica_sets.indexer.get_by_name(namespace, ref.get("name", ""))
        if rs is None or rs["metadata"].get("uid") != ref.get("uid"):
            return None
        rs_ref = controller_of(rs)
        return self._resolve(namespace, rs_ref) if rs_ref is not None else None

    # ---- sync ----

    async def sync_deployment(self, key: str) -> None:
        cached = self.deployments.indexer.get(key)
        if cached is None:
            log.debug("Deployment %s has been deleted", key)
            return
        d = copy.deepcopy(cached)
        selector = util.spec(d).get("selector") or {}
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            await self._selecting_all(d)
            return
        rs_list = await self._replica_sets_for_deployment(d)
        pod_map = self._pod_map(d, rs_list)
        if d["metadata"].get("deletionTimestamp"):
            await self.sync_status_only(d, rs_list)
            return
        await self.check_paused_conditions(d)
        if util.spec(d).get("paused"):
            await self.sync(d, rs_list)
            return
        if get_rollback_to(d) is not None:
            await self.rollback(d, rs_list)
            return
        if await self.is_scaling_event(d, rs_list):
            await self.sync(d, rs_list)
            return
        strategy = util.strategy_type(d)
        if strategy == util.RECREATE:
            await self.rollout_recreate(d, rs_list, pod_map)
        elif strategy == util.ROLLING_UPDATE:
            await self.rollout_rolling(d, rs_list)
        else:
            raise ValueError(f"unexpected deployment strategy type: {strategy}")


    sync_handler = sync_deployment
    async def _selecting_all(self, d: Object) -> None:
        self.recorder.event(
            d,
            WARNING,
            "SelectingAll",
            "This deployment is selecting all pods. A non-empty selector is required.",
        )
        generation = d["metadata"].get("generation", 0)
        if util.status_int(d, "observedGeneration") < generation:
            d.setdefault("status", {})["observedGeneration"] = generation
            await self.update_deployment_status(d)

    async def _replica_sets_for_deployment(self, d: Object) -> list[Object]:
        """The sets this Deployment controls, adopting matching orphans and releasing sets that stopped
        matching (ControllerRefManager.ClaimReplicaSets)."""
        meta = d["metadata"]
        try:
            selector = selector_from_label_selector(util.spec(d).get("selector"))
        except (SelectorParseError, ValueError) as err:
            raise ValueError(
                f"deployment {meta['namespace']}/{meta['name']} has invalid label selector: {err}"
            ) from None

        async def fresh() -> Object:
            current = await self.deployments_api(meta["namespace"]).get(meta["name"])
            if current["metadata"].get("uid") != meta.get("uid"):
                raise ValueError(
                    f"original Deployment {meta['namespace']}/{meta['name']} is gone: got uid "
                    f"{current['metadata'].get('uid')}, wanted {meta.get('uid')}"
                )
            return current

        async def patch(namespace: str, name: str, body: Object) -> Object:
            return await self.replica_sets_api(namespace).patch(name, body, STRATEGIC_MERGE_PATCH)

        manager = ControllerRefManager(
            d, selector, "apps/v1", "Deployment", patch, recheck_deletion_timestamp(fresh)
        )
        return await manager.claim(self.replica_sets.indexer.list(meta["namespace"]))

    def _pod_map(self, d: Object, rs_list: list[Object]) -> dict[str, list[Object]]:
        """The Deployment's pods by the uid of the set that controls them (every set has an entry)."""
        selector = selector_from_label_selector(util.spec(d).get("selector"))
        pod_map: dict[str, list[Object]] = {rs["metadata"]["uid"]: [] for rs in rs_list}
        for pod in self.pods.indexer.list(d["metadata"]["namespace"]):
            if not selector.matches(pod["metadata"].get("labels") or {}):
                continue
            ref = controller_of(pod)
            if ref is not None and ref.get("uid") in pod_map:
                pod_map[ref["uid"]].append(pod)
        return pod_map
