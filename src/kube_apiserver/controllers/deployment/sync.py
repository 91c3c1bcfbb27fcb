"""sync.go: what every strategy shares. The new ReplicaSet (found by its template, or created named
`<deployment>-<pod-template-hash>` with the next revision), proportional scaling when only
spec.replicas changed (or the Deployment is paused), the cleanup of old sets beyond
revisionHistoryLimit, and the Deployment's status."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...client.informers import SharedIndexInformer
from ...client.record import EventRecorder
from ...client.rest import Client, ResourceClient
from ...client.workqueue import WorkQueue
from ..controller_utils import controller_of, new_controller_ref
from . import util

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000
NORMAL, WARNING = "Normal", "Warning"
SCALING_REPLICA_SET = "ScalingReplicaSet"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"
# The status fields compared and written (zeros are omitted, as Go's omitempty writes them).
STATUS_COUNTS = (
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
)


def normalized_status(deployment_status: Object) -> Object:
    """The status as the API would serve it back: no zero counts, no empty conditions, no null."""
    return {k: v for k, v in deployment_status.items() if v not in (None, 0, [], {})}


class DeploymentSync:
    """The state the strategies share; the controller (controller.py) adds the informer handlers."""

    def __init__(
        self,
        client: Client,
        replica_sets: SharedIndexInformer,
        recorder: EventRecorder,
        queue: WorkQueue[str],
        clock: Callable[[], float] = wall_time,
    ):
        self.client = client
        self.rs_informer = replica_sets
        self.recorder = recorder
        self.queue = queue
        self.clock = clock

    def deployments_api(self, namespace: str) -> ResourceClient:
        return self.client.resource("apps", "v1", "deployments").namespace(namespace)

    def replica_sets_api(self, namespace: str) -> ResourceClient:
        return self.client.resource("apps", "v1", "replicasets").namespace(namespace)

    async def update_deployment_status(self, d: Object) -> None:
        """UpdateStatus with the status `d` holds; `d` keeps the new resourceVersion so a second write in
        the same sync does not conflict with the first."""
        written = await self.deployments_api(d["metadata"]["namespace"]).update_status(d)
        d["metadata"]["resourceVersion"] = written["metadata"].get("resourceVersion")

    # ---- the new and old sets ----

    async def get_all_replica_sets_and_sync_revision(
        self, d: Object, rs_list: list[Object], create_if_not_existed: bool
    ) -> tuple[Object | None, list[Object]]:
        _, all_old = util.find_old_replica_sets(d, rs_list)
        new_rs = await self.get_new_replica_set(d, rs_list, all_old, create_if_not_existed)
        return new_rs, all_old

    async def get_new_replica_set(
        self, d: Object, rs_list: list[Object], old_sets: list[Object], create_if_not_existed: bool
    ) -> Object | None:
        existing = util.find_new_replica_set(d, rs_list)
        new_revision = str(util.max_revision(old_sets) + 1)
        if existing is not None:
            return await self._sync_existing_new_replica_set(d, existing, new_revision)
        if not create_if_not_existed:
            return None
        return await self._create_new_replica_set(d, old_sets, new_revision)

    async def _sync_existing_new_replica_set(self, d: Object, existing: Object, new_revision: str) -> Object:
        """Its annotations and minReadySeconds follow the Deployment; the Deployment takes its revision."""
        rs = copy.deepcopy(existing)
        annotations_updated = util.set_new_replica_set_annotations(
            d, rs, new_revision, True, MAX_REV_HISTORY_LENGTH_IN_CHARS
        )
        min_ready = util.spec(d).get("minReadySeconds") or 0
        if annotations_updated or (util.spec(rs).get("minReadySeconds") or 0) != min_ready:
            rs["spec"]["minReadySeconds"] = min_ready
            return await self.replica_sets_api(rs["metadata"]["namespace"]).update(rs)
        needs_update = util.set_deployment_revision(d, util.annotations(rs).get(util.REVISION_ANNOTATION, ""))
        d_status = d.setdefault("status", {})
        if util.has_progress_deadline(d) and util.get_condition(d_status, util.PROGRESSING) is None:
            message = f'Found new replica set "{rs["metadata"]["name"]}"'
            util.set_condition(
                d_status, util.new_condition(util.PROGRESSING, "True", util.FOUND_NEW_RS_REASON, message)
            )
            needs_update = True
        if needs_update:
            await self.update_deployment_status(d)
        return rs

    def _new_replica_set(self, d: Object) -> Object:
        template = copy.deepcopy(util.template_of(d))
        pod_template_hash = util.compute_hash(template, util.status(d).get("collisionCount"))
        template_meta = template.setdefault("metadata", {})
        template_meta["labels"] = {
            **(template_meta.get("labels") or {}),
            util.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: pod_template_hash,
        }
        selector = copy.deepcopy(util.spec(d).get("selector") or {})
        selector["matchLabels"] = {
            **(selector.get("matchLabels") or {}),
            util.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: pod_template_hash,
        }
        meta = d["metadata"]
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_template_hash}",
                "namespace": meta["namespace"],
                "ownerReferences": [new_controller_ref(d, "apps/v1", "Deployment")],
                "labels": dict(template_meta["labels"]),
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": util.spec(d).get("minReadySeconds") or 0,
                "selector": selector,
                "template": template,
            },
        }

    async def _create_new_replica_set(
        self, d: Object, old_sets: list[Object], new_revision: str
    ) -> Object | None:
        new_rs = self._new_replica_set(d)
        new_count = util.new_rs_new_replicas(d, [*old_sets, new_rs], new_rs)
        new_rs["spec"]["replicas"] = new_count
        util.set_new_replica_set_annotations(d, new_rs, new_revision, False, MAX_REV_HISTORY_LENGTH_IN_CHARS)
        namespace, name = d["metadata"]["namespace"], new_rs["metadata"]["name"]
        already_exists = False
        try:
            created = await self.replica_sets_api(namespace).create(new_rs)
        except errors.StatusError as err:
            if err.code == 409 and err.reason == "AlreadyExists":
                created = await self._adopt_existing_or_collide(d, name, err)
                already_exists = True
            else:
                await self._creation_failed(d, name, err)
                raise
        if not already_exists and new_count > 0:
            self.recorder.eventf(
                d,
                NORMAL,
                SCALING_REPLICA_SET,
                "Scaled up replica set %s from 0 to %d",
                created["metadata"]["name"],
                new_count,
            )
        needs_update = util.set_deployment_revision(d, new_revision)
        if not already_exists and util.has_progress_deadline(d):
            message = f'Created new replica set "{created["metadata"]["name"]}"'
            util.set_condition(
                d.setdefault("status", {}),
                util.new_condition(util.PROGRESSING, "True", util.NEW_REPLICA_SET_REASON, message),
            )
            needs_update = True
        if needs_update:
            await self.update_deployment_status(d)
        return created

    async def _adopt_existing_or_collide(self, d: Object, name: str, err: errors.StatusError) -> Object:
        """A set of that name exists: ours with this template (the informer was behind), or a hash
        collision: the collision count goes up so the next try hashes differently."""
        rs = self.rs_informer.indexer.get_by_name(d["metadata"]["namespace"], name)
        if rs is None:
            raise err
        ref = controller_of(rs)
        owned = ref is not None and ref.get("uid") == d["metadata"]["uid"]
        if owned and util.equal_ignore_hash(util.template_of(d), util.template_of(rs)):
            return rs
        d_status = d.setdefault("status", {})
        previous = d_status.get("collisionCount") or 0
        d_status["collisionCount"] = previous + 1
        try:
            await self.update_deployment_status(d)
            log.info(
                'Found a hash collision for deployment "%s" - bumping collisionCount (%d->%d) to resolve it',
                d["metadata"]["name"],
                previous,
                previous + 1,
            )
        except errors.StatusError:
            pass
        raise err

    async def _creation_failed(self, d: Object, name: str, err: errors.StatusError) -> None:
        causes = (err.details or {}).get("causes") or ()
        if any(c.get("type") == NAMESPACE_TERMINATING_CAUSE for c in causes):
            return
        message = f'Failed to create new replica set "{name}": {err.message}'
        if util.has_progress_deadline(d):
            util.set_condition(
                d.setdefault("status", {}),
                util.new_condition(util.PROGRESSING, "False", util.FAILED_RS_CREATE_REASON, message),
            )
            try:
                await self.update_deployment_status(d)
            except errors.StatusError:
                pass  # the create's error is the one reported
        self.recorder.event(d, WARNING, util.FAILED_RS_CREATE_REASON, message)

    # ---- scaling ----

    async def scale(self, d: Object, new_rs: Object | None, old_sets: list[Object]) -> None:
        """A scaling event: the only active set takes the new size; while a rollout is under way, the
        replicas added or removed are spread over the active sets by their share."""
        active_or_latest = util.find_active_or_latest(new_rs, old_sets)
        if active_or_latest is not None:
            if util.replicas(active_or_latest) != util.replicas(d):
                await self.scale_replica_set_and_record_event(active_or_latest, util.replicas(d), d)
            return
        if util.is_saturated(d, new_rs):
            for old in util.filter_active(old_sets):
                await self.scale_replica_set_and_record_event(old, 0, d)
            return
        if util.is_rolling_update(d):
            await self._scale_proportionally(d, util.filter_active([*old_sets, new_rs]))

    async def _scale_proportionally(self, d: Object, all_sets: list[Object]) -> None:
        allowed = util.replicas(d) + util.max_surge(d) if util.replicas(d) > 0 else 0
        to_add = allowed - util.replica_count(all_sets)
        operation = ""
        if to_add > 0:
            all_sets, operation = util.by_size(all_sets, newer_first=True), "up"
        elif to_add < 0:
            all_sets, operation = util.by_size(all_sets, newer_first=False), "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_sets:
            proportion = util.get_proportion(rs, d, to_add, added) if to_add else 0
            sizes[rs["metadata"]["name"]] = util.replicas(rs) + proportion
            added += proportion
        for index, rs in enumerate(all_sets):
            name = rs["metadata"]["name"]
            if index == 0 and to_add != 0:  # the largest takes what rounding left over
                sizes[name] = max(sizes[name] + to_add - added, 0)
            await self.scale_replica_set(rs, sizes[name], d, operation)

    async def scale_replica_set_and_record_event(
        self, rs: Object, new_scale: int, d: Object
    ) -> tuple[bool, Object]:
        if util.replicas(rs) == new_scale:
            return False, rs
        operation = "up" if util.replicas(rs) < new_scale else "down"
        return await self.scale_replica_set(rs, new_scale, d, operation)

    async def scale_replica_set(
        self, rs: Object, new_scale: int, d: Object, operation: str
    ) -> tuple[bool, Object]:
        old_scale = util.replicas(rs)
        size_needs_update = old_scale != new_scale
        max_replicas = util.replicas(d) + util.max_surge(d)
        if not size_needs_update and not util.replicas_annotations_need_update(
            rs, util.replicas(d), max_replicas
        ):
            return False, rs
        scaled = copy.deepcopy(rs)
        scaled["spec"]["replicas"] = new_scale
        util.set_replicas_annotations(scaled, util.replicas(d), max_replicas)
        updated = await self.replica_sets_api(rs["metadata"]["namespace"]).update(scaled)
        if size_needs_update:
            self.recorder.eventf(
                d,
                NORMAL,
                SCALING_REPLICA_SET,
                "Scaled %s replica set %s from %d to %d",
                operation,
                updated["metadata"]["name"],
                old_scale,
                new_scale,
            )
        return size_needs_update, updated

    # ---- history ----

    async def cleanup_deployment(self, old_sets: list[Object], d: Object) -> None:
        """Deletes the oldest of the old sets beyond revisionHistoryLimit, those fully scaled down only."""
        if not util.has_revision_history_limit(d):
            return
        alive = [rs for rs in old_sets if not rs["metadata"].get("deletionTimestamp")]
        diff = len(alive) - int(util.spec(d)["revisionHistoryLimit"])
        if diff <= 0:
            return
        for rs in util.by_creation_timestamp(alive)[:diff]:
            meta = rs["metadata"]
            if (
                util.status_int(rs, "replicas") != 0
                or util.replicas(rs) != 0
                or meta.get("generation", 0) > util.status_int(rs, "observedGeneration")
            ):
                continue  # still scaling down, or not yet seen so by its controller
            try:
                await self.replica_sets_api(meta["namespace"]).delete(meta["name"])
            except errors.StatusError as err:
                if err.code != 404:
                    raise

    # ---- status ----

    def calculate_status(self, all_sets: list[Object | None], new_rs: Object | None, d: Object) -> Object:
        available = util.available_replica_count(all_sets)
        total = util.replica_count(all_sets)
        new_status: Object = {
            "observedGeneration": d["metadata"].get("generation", 0),
            "replicas": util.actual_replica_count(all_sets),
            "updatedReplicas": util.actual_replica_count([new_rs]),
            "readyReplicas": util.ready_replica_count(all_sets),
            "availableReplicas": available,
            "unavailableReplicas": max(total - available, 0),
            "conditions": [dict(c) for c in util.status(d).get("conditions") or ()],
        }
        if util.status(d).get("collisionCount") is not None:
            new_status["collisionCount"] = util.status(d)["collisionCount"]
        if available >= util.replicas(d) - util.max_unavailable(d):
            condition = util.new_condition(
                util.AVAILABLE,
                "True",
                util.MINIMUM_REPLICAS_AVAILABLE,
                "Deployment has minimum availability.",
            )
        else:
            condition = util.new_condition(
                util.AVAILABLE,
                "False",
                util.MINIMUM_REPLICAS_UNAVAILABLE,
                "Deployment does not have minimum availability.",
            )
        util.set_condition(new_status, condition)
        return new_status

    async def sync_deployment_status(
        self, all_sets: list[Object | None], new_rs: Object | None, d: Object
    ) -> None:
        new_status = self.calculate_status(all_sets, new_rs, d)
        await self.write_status_if_changed(d, new_status)

    async def write_status_if_changed(self, d: Object, new_status: Object) -> bool:
        new_status = normalized_status(new_status)
        if normalized_status(util.status(d)) == new_status:
            return False
        d["status"] = new_status
        await self.update_deployment_status(d)
        return True

    # ---- sync modes ----

    async def sync_status_only(self, d: Object, rs_list: list[Object]) -> None:
        new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        await self.sync_deployment_status([*old_sets, new_rs], new_rs, d)

    async def sync(self, d: Object, rs_list: list[Object]) -> None:
        """A scaling event or a paused Deployment: scales, never rolls out."""
        new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        await self.scale(d, new_rs, old_sets)
        if util.spec(d).get("paused") and get_rollback_to(d) is None:
            await self.cleanup_deployment(old_sets, d)
        await self.sync_deployment_status([*old_sets, new_rs], new_rs, d)

    async def check_paused_conditions(self, d: Object) -> None:
        """The Progressing condition says DeploymentPaused / DeploymentResumed (not over a timeout)."""
        if not util.has_progress_deadline(d):
            return
        d_status = d.setdefault("status", {})
        condition = util.get_condition(d_status, util.PROGRESSING)
        if condition is not None and condition.get("reason") == util.TIMED_OUT_REASON:
            return
        paused_exists = condition is not None and condition.get("reason") == util.PAUSED_DEPLOY_REASON
        paused = bool(util.spec(d).get("paused"))
        if paused and not paused_exists:
            new = util.new_condition(
                util.PROGRESSING, "Unknown", util.PAUSED_DEPLOY_REASON, "Deployment is paused"
            )
        elif not paused and paused_exists:
            new = util.new_condition(
                util.PROGRESSING, "Unknown", util.RESUMED_DEPLOY_REASON, "Deployment is resumed"
            )
        else:
            return
        util.set_condition(d_status, new)
        await self.update_deployment_status(d)

    async def is_scaling_event(self, d: Object, rs_list: list[Object]) -> bool:
        """An active set's desired-replicas annotation differs from spec.replicas: the user scaled."""
        new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        for rs in util.filter_active([*old_sets, new_rs]):
            desired = util.desired_replicas_annotation(rs)
            if desired is not None and desired != util.replicas(d):
                return True
        return False


def get_rollback_to(d: Object) -> int | None:
    """The revision the deprecated rollback annotation asks for (apps/v1 has no rollback subresource)."""
    value = util.annotations(d).get(util.DEPRECATED_ROLLBACK_TO)
    if not value:
        return None
    try:
        return int(value, 10)
    except ValueError:
        return None
