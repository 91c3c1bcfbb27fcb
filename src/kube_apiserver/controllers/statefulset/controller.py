"""The statefulset controller (pkg/controller/statefulset): each StatefulSet gets pods `<set>-<ordinal>`
for the ordinals from spec.ordinals.start on, created in order once each predecessor is Running and
Ready (OrderedReady) or all at once (Parallel), deleted from the highest ordinal on scale-down, claims
from the volumeClaimTemplates created before their pod, and a history of ControllerRevisions of its pod
template. A RollingUpdate replaces the pods at or above the partition whose revision is not the update
revision, highest first, one at a time; OnDelete leaves it to the user. The status counts the pods
created, ready, available, at the current and at the update revision."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...apimachinery.labels import Selector, SelectorParseError, selector_from_label_selector
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import EventRecorder
from ...client.rest import STRATEGIC_MERGE_PATCH, Client
from ..controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from ..controller_utils import controller_of, controllers_selecting, is_pod_ready
from ..history import (
    History,
    equal_revision,
    find_equal_revisions,
    next_revision,
    revisions_to_truncate,
    sort_controller_revisions,
)
from ..queue_controller import QueueController
from . import utils
from .pod_control import StatefulPodControl

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
COMPONENT = "statefulset-controller"
CONCURRENT_STATEFULSET_SYNCS = 5  # kube-controller-manager's --concurrent-statefulset-syncs
MAX_BATCH_SIZE = 500  # Parallel creates and deletes in flight at once
STATUS_UPDATE_RETRIES = 5
DEFAULT_REVISION_HISTORY_LIMIT = 10


def _selector(sts: Object) -> Selector:
    return selector_from_label_selector(utils.spec(sts).get("selector"))


class StatefulSetController(QueueController):
    name = "statefulset"

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        workers: int = CONCURRENT_STATEFULSET_SYNCS,
        clock: Callable[[], float] = wall_time,
    ):
        super().__init__(self.name, client, recorder, workers)
        self.clock = clock
        self.sets = informers.for_resource("apps", "v1", "statefulsets")
        self.pods = informers.for_resource("", "v1", "pods")
        self.claims = informers.for_resource("", "v1", "persistentvolumeclaims")
        self.revisions = informers.for_resource("apps", "v1", "controllerrevisions")
        self.history = History(client, self.revisions.indexer)
        self.pod_control = StatefulPodControl(client, self.pods.indexer, self.claims.indexer, recorder)
        self.informers = (self.sets, self.pods, self.claims, self.revisions)

    # ---- informer handlers ----

    def register_handlers(self) -> None:
        self.sets.add_event_handler(
            EventHandler(self._enqueue, lambda _old, new: self._enqueue(new), self._enqueue)
        )
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._delete_pod))

    def _enqueue(self, sts: Object) -> None:
        self.queue.add(object_key(sts))

    def _resolve(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != utils.KIND:
            return None
        sts = self.sets.indexer.get_by_name(namespace, ref.get("name", ""))
        if sts is None or sts["metadata"].get("uid") != ref.get("uid"):
            return None
        return sts

    def _selecting(self, pod: Object) -> list[Object]:
        return controllers_selecting(
            pod, self.sets.indexer.list(pod["metadata"].get("namespace", "")), _selector
        )

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod)
            return
        ref = controller_of(pod)
        if ref is not None:
            sts = self._resolve(pod["metadata"].get("namespace", ""), ref)
            if sts is not None:
                self._enqueue(sts)
            return
        for sts in self._selecting(pod):  # an orphan: whoever matches may adopt it
            self._enqueue(sts)

    def _update_pod(self, old: Object, new: Object) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return  # a resync
        namespace = new["metadata"].get("namespace", "")
        new_ref, old_ref = controller_of(new), controller_of(old)
        if new_ref != old_ref and old_ref is not None:
            sts = self._resolve(namespace, old_ref)
            if sts is not None:
                self._enqueue(sts)
        if new_ref is not None:
            sts = self._resolve(namespace, new_ref)
            if sts is None:
                return
            self._enqueue(sts)
            min_ready = utils.min_ready_seconds(sts)
            if not is_pod_ready(old) and is_pod_ready(new) and min_ready > 0:
                self.queue.add_after(object_key(sts), min_ready + 1.0)  # to count it available then
            return
        if new_ref != old_ref or old["metadata"].get("labels") != new["metadata"].get("labels"):
            for sts in self._selecting(new):
                self._enqueue(sts)

    def _delete_pod(self, pod: Object) -> None:
        ref = controller_of(pod)
        if ref is None:
            return
        sts = self._resolve(pod["metadata"].get("namespace", ""), ref)
        if sts is not None:
            self._enqueue(sts)

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        sts = self.sets.indexer.get(key)
        if sts is None:
            return
        try:
            selector = _selector(sts)
        except (SelectorParseError, ValueError) as err:
            log.info("StatefulSet %s: invalid selector: %s", key, err)  # not transient: no retry
            return
        await self._adopt_orphan_revisions(sts, selector)
        pods = await self._claim_pods(sts, selector)
        status = await self._update_stateful_set(sts, selector, pods)
        min_ready = utils.min_ready_seconds(sts)
        if min_ready > 0 and status is not None and status["availableReplicas"] != utils.replicas(sts):
            self.queue.add_after(key, float(min_ready))

    def _can_adopt(self, sts: Object) -> Callable[[], Awaitable[None]]:
        meta = sts["metadata"]

        async def fresh() -> Object:
            current = (
                await self.client.resource("apps", "v1", "statefulsets")
                .namespace(meta["namespace"])
                .get(meta["name"])
            )
            if current["metadata"].get("uid") != meta.get("uid"):
                raise ValueError(
                    f"original StatefulSet {meta['namespace']}/{meta['name']} is gone: got uid "
                    f"{current['metadata'].get('uid')}, wanted {meta.get('uid')}"
                )
            return current

        return recheck_deletion_timestamp(fresh)

    async def _adopt_orphan_revisions(self, sts: Object, selector: Selector) -> None:
        orphans = [
            r for r in self.history.list_controller_revisions(sts, selector) if controller_of(r) is None
        ]
        if not orphans:
            return
        try:
            await self._can_adopt(sts)()
        except Exception as err:  # noqa: BLE001 - reported as upstream words it
            raise ValueError(f"can't adopt ControllerRevisions: {err}") from err
        for revision in orphans:
            await self.history.adopt_controller_revision(sts, utils.API_VERSION, utils.KIND, revision)

    async def _claim_pods(self, sts: Object, selector: Selector) -> list[Object]:
        async def patch(namespace: str, name: str, body: Object) -> Object:
            return (
                await self.client.resource("", "v1", "pods")
                .namespace(namespace)
                .patch(name, body, STRATEGIC_MERGE_PATCH)
            )

        manager = ControllerRefManager(
            sts, selector, utils.API_VERSION, utils.KIND, patch, self._can_adopt(sts)
        )
        pods = self.pods.indexer.list(sts["metadata"].get("namespace", ""))
        return await manager.claim(pods, lambda pod: utils.is_member_of(sts, pod))

    async def _update_stateful_set(
        self, sts: Object, selector: Selector, pods: list[Object]
    ) -> Object | None:
        """UpdateStatefulSet: revisions, pods, status, then the history trimmed to the limit."""
        revisions = sort_controller_revisions(self.history.list_controller_revisions(sts, selector))
        current: Object | None = None
        update: Object | None = None
        try:
            current, update, collision_count = await self._get_revisions(sts, revisions)
            status, failure = await self._update_pods(sts, current, update, collision_count, pods)
            try:
                await self._update_status(sts, status)
            except errors.StatusError as err:
                if failure is None:
                    raise
                log.error("StatefulSet %s: could not update status: %s", object_key(sts), err.message)
            if failure is not None:
                raise failure
            return status
        finally:
            await self._truncate_history(sts, pods, revisions, current, update)

    async def _get_revisions(self, sts: Object, revisions: list[Object]) -> tuple[Object, Object, int]:
        """getStatefulSetRevisions: the update revision (the last one if the template is unchanged, an
        equal older one renumbered for a rollback, else a new one) and the current one."""
        collision_count = int((sts.get("status") or {}).get("collisionCount") or 0)
        update = utils.new_revision(sts, next_revision(revisions), collision_count)
        equal = find_equal_revisions(revisions, update)
        if equal and equal_revision(revisions[-1], equal[-1]):
            update = revisions[-1]
        elif equal:
            update = await self.history.update_controller_revision(equal[-1], update["revision"])
        else:
            update, collision_count = await self.history.create_controller_revision(
                sts, update, collision_count
            )
        current_name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == current_name), update)
        return current, update, collision_count

    async def _truncate_history(
        self,
        sts: Object,
        pods: list[Object],
        revisions: list[Object],
        current: Object | None,
        update: Object | None,
    ) -> None:
        live = {utils.pod_revision(p) for p in pods}
        live.update(r["metadata"]["name"] for r in (current, update) if r is not None)
        limit = utils.spec(sts).get("revisionHistoryLimit")
        limit = DEFAULT_REVISION_HISTORY_LIMIT if limit is None else int(limit)
        for revision in revisions_to_truncate(revisions, live, limit):
            try:
                await self.history.delete_controller_revision(revision)
            except errors.StatusError as err:
                if err.code != 404:
                    raise

    # ---- pods ----

    async def _update_pods(
        self, sts: Object, current: Object, update: Object, collision_count: int, pods: list[Object]
    ) -> tuple[Object, Exception | None]:
        """updateStatefulSet: the status and the first error; the pods created, fixed or deleted."""
        current_set, update_set = utils.apply_revision(sts, current), utils.apply_revision(sts, update)
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        min_ready = utils.min_ready_seconds(sts)
        status: Object = {
            "observedGeneration": sts["metadata"].get("generation", 0),
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": collision_count,
        }
        status.update(utils.replica_status(pods, min_ready, current_name, update_name))
        start, count = utils.start_ordinal(sts), utils.replicas(sts)
        replicas: list[Object | None] = [None] * count
        condemned = []
        for pod in pods:
            if utils.in_ordinal_range(pod, sts):
                replicas[utils.ordinal_of(pod) - start] = pod
            elif utils.ordinal_of(pod) >= 0:
                condemned.append(pod)
        members = [
            pod
            if pod is not None
            else utils.new_versioned_pod(current_set, update_set, current_name, update_name, start + i)
            for i, pod in enumerate(replicas)
        ]
        condemned.sort(key=utils.ordinal_of, reverse=True)
        unavailable = [p for p in members if utils.is_unavailable(p, min_ready)]
        unavailable += [p for p in reversed(condemned) if utils.is_unavailable(p, min_ready)]
        first_unavailable = unavailable[0] if unavailable else None

        def recount() -> Object:
            status.update(utils.replica_status(members + condemned, min_ready, current_name, update_name))
            return status

        if sts["metadata"].get("deletionTimestamp"):
            return status, None
        monotonic = utils.spec(sts).get("podManagementPolicy") != "Parallel"
        steps: Sequence[tuple[list[Object], Callable[[Object], Awaitable[bool]]]] = (
            (members, lambda pod: self._process_replica(sts, update_set, monotonic, pod)),
            (condemned, lambda pod: self._fix_condemned_claims(update_set, pod)),
            (condemned, lambda pod: self._process_condemned(sts, first_unavailable, monotonic, pod)),
        )
        for pods_of_step, step in steps:
            try:
                if await _run_for_all(pods_of_step, step, monotonic):
                    return recount(), None
            except (errors.StatusError, ValueError) as err:
                return recount(), err
        recount()
        if utils.update_strategy(sts) == "OnDelete":
            return status, None
        return await self._rolling_update(sts, members, update_name, min_ready, status)

    async def _rolling_update(
        self, sts: Object, members: list[Object], update_name: str, min_ready: int, status: Object
    ) -> tuple[Object, Exception | None]:
        """The highest pod at or above the partition not at the update revision is deleted (recreated at
        it on the next sync), once every higher one is available."""
        rolling = (utils.spec(sts).get("updateStrategy") or {}).get("rollingUpdate")
        update_min = int((rolling or {}).get("partition") or 0)
        for pod in reversed(members[update_min:]):
            if utils.pod_revision(pod) != update_name and not utils.is_terminating(pod):
                try:
                    await self.pod_control.delete_stateful_pod(sts, pod)
                except errors.StatusError as err:
                    if err.code != 404:
                        return status, err
                status["currentReplicas"] -= 1
                return status, None
            if utils.is_unavailable(pod, min_ready):
                return status, None
        return status, None

    async def _process_replica(self, sts: Object, update_set: Object, monotonic: bool, pod: Object) -> bool:
        """processReplica: True when nothing more may be done this sync (OrderedReady waits)."""
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Failed", "Succeeded"):  # restarted whatever its exit: deleted, recreated next sync
            if not utils.is_terminating(pod):
                await self.pod_control.delete_stateful_pod(sts, pod)
            return True
        if not utils.is_created(pod):
            if self.pod_control.pod_claim_is_stale(sts, pod):
                return True  # the claim of an earlier pod of this name is still being deleted
            await self.pod_control.create_stateful_pod(sts, pod)
            if monotonic:
                return True
        if phase == "Pending":
            await self.pod_control.create_missing_claims(sts, pod)
        if monotonic and (
            utils.is_terminating(pod)
            or not utils.is_running_and_ready(pod)
            or not utils.is_running_and_available(pod, utils.min_ready_seconds(sts))
        ):
            return True
        if not utils.is_created(pod):
            return False
        retention_match = self.pod_control.claims_match_retention_policy(update_set, pod)
        if utils.identity_matches(sts, pod) and utils.storage_matches(sts, pod) and retention_match:
            return False
        await self.pod_control.update_stateful_pod(update_set, pod)
        return False

    async def _fix_condemned_claims(self, update_set: Object, pod: Object) -> bool:
        if not self.pod_control.claims_match_retention_policy(update_set, pod):
            await self.pod_control.update_claims_for_retention_policy(update_set, pod)
        return False

    async def _process_condemned(
        self, sts: Object, first_unavailable: Object | None, monotonic: bool, pod: Object
    ) -> bool:
        """processCondemned: the highest ordinal goes first, once the rest are healthy (OrderedReady)."""
        if utils.is_terminating(pod):
            return monotonic  # OrderedReady waits for it to be gone
        if (
            monotonic
            and pod is not first_unavailable
            and (
                not utils.is_running_and_ready(pod)
                or not utils.is_running_and_available(pod, utils.min_ready_seconds(sts))
            )
        ):
            return True
        await self.pod_control.delete_stateful_pod(sts, pod)
        return True

    # ---- status ----

    async def _update_status(self, sts: Object, status: Object) -> None:
        utils.complete_rolling_update(sts, status)
        if not utils.inconsistent_status(sts, status):
            return
        api = self.client.resource("apps", "v1", "statefulsets").namespace(sts["metadata"]["namespace"])
        for attempt in range(STATUS_UPDATE_RETRIES):
            try:
                await api.update_status({**sts, "status": dict(status)})
                return
            except errors.StatusError as err:
                if err.code != 409 or attempt == STATUS_UPDATE_RETRIES - 1:
                    raise
                sts = await api.get(sts["metadata"]["name"])


async def _run_for_all(
    pods: list[Object], step: Callable[[Object], Awaitable[bool]], monotonic: bool
) -> bool:
    """runForAll: in order, stopping at the first that says so (OrderedReady), or all in slow-start
    batches (Parallel), stopping at the first batch with a failure. True: stop this sync."""
    if monotonic:
        for pod in pods:
            if await step(pod):
                return True
        return False
    index, size = 0, 1
    while index < len(pods):
        batch = pods[index : index + size]
        results = await asyncio.gather(*(step(pod) for pod in batch), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        index += len(batch)
        size = min(2 * size, MAX_BATCH_SIZE)
    return False
