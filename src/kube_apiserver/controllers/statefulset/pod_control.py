"""StatefulPodControl (pkg/controller/statefulset/stateful_pod_control.go): creates, updates and deletes a
StatefulSet's pods and creates their claims first, keeping the claims' owner references as the retention
policy asks, with the Events kube-controller-manager records ("create Pod web-0 in StatefulSet web
successful", "create Claim www-web-0 Pod web-0 in StatefulSet web success", ...)."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import errors
from ...client.informers import Indexer
from ...client.record import NORMAL, WARNING, EventRecorder
from ...client.rest import Client, ResourceClient
from . import utils

Object = dict[str, Any]
UPDATE_RETRIES = 5  # retry.DefaultBackoff's steps


def error_text(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def _is_not_found(err: BaseException) -> bool:
    return isinstance(err, errors.StatusError) and err.code == 404


def _already_exists(err: BaseException) -> bool:
    return isinstance(err, errors.StatusError) and err.code == 409 and err.reason == "AlreadyExists"


class StatefulPodControl:
    def __init__(self, client: Client, pods: Indexer, claims: Indexer, recorder: EventRecorder):
        self.client = client
        self.pods = pods
        self.claims = claims
        self.recorder = recorder

    def _pods(self, namespace: str) -> ResourceClient:
        return self.client.resource("", "v1", "pods").namespace(namespace)

    def _claims(self, namespace: str) -> ResourceClient:
        return self.client.resource("", "v1", "persistentvolumeclaims").namespace(namespace)

    # ---- events ----

    def record_pod_event(self, verb: str, sts: Object, pod: Object, err: BaseException | None) -> None:
        name, set_name = pod["metadata"].get("name", ""), sts["metadata"]["name"]
        if err is None:
            self.recorder.event(
                sts,
                NORMAL,
                f"Successful{verb.title()}",
                f"{verb} Pod {name} in StatefulSet {set_name} successful",
            )
        else:
            self.recorder.event(
                sts,
                WARNING,
                f"Failed{verb.title()}",
                f"{verb} Pod {name} in StatefulSet {set_name} failed error: {error_text(err)}",
            )

    def _record_claim_event(
        self, verb: str, sts: Object, pod: Object, claim: Object, err: BaseException | None
    ) -> None:
        claim_name, name, set_name = (
            claim["metadata"]["name"],
            pod["metadata"].get("name", ""),
            sts["metadata"]["name"],
        )
        if err is None:
            self.recorder.event(
                sts,
                NORMAL,
                f"Successful{verb.title()}",
                f"{verb} Claim {claim_name} Pod {name} in StatefulSet {set_name} success",
            )
        else:
            self.recorder.event(
                sts,
                WARNING,
                f"Failed{verb.title()}",
                f"{verb} Claim {claim_name} for Pod {name} in StatefulSet {set_name} failed error: "
                f"{error_text(err)}",
            )

    # ---- pods ----

    async def create_stateful_pod(self, sts: Object, pod: Object) -> None:
        """The claims first, then the pod; an AlreadyExists (a stale informer) is raised without an Event."""
        try:
            await self.create_claims(sts, pod)
        except ValueError as err:
            self.record_pod_event("create", sts, pod, err)
            raise
        try:
            await self._pods(sts["metadata"]["namespace"]).create(pod)
        except errors.StatusError as err:
            if not _already_exists(err):
                self.record_pod_event("create", sts, pod, err)
            raise
        try:
            await self.update_claims_for_retention_policy(sts, pod)
        except (errors.StatusError, ValueError) as err:
            self.record_pod_event("update", sts, pod, err)
            raise
        self.record_pod_event("create", sts, pod, None)

    async def update_stateful_pod(self, sts: Object, pod: Object) -> None:
        """Restores the pod's identity and storage, and its claims' references, retrying on conflicts."""
        pod = copy.deepcopy(pod)
        attempted, failure = False, None
        for _ in range(UPDATE_RETRIES):
            consistent = True
            if not utils.identity_matches(sts, pod):
                utils.update_identity(sts, pod)
                consistent = False
            try:
                if not utils.storage_matches(sts, pod):
                    utils.update_storage(sts, pod)
                    consistent = False
                    await self.create_claims(sts, pod)
                if not self.claims_match_retention_policy(sts, pod):
                    await self.update_claims_for_retention_policy(sts, pod)
                    consistent = False
            except (errors.StatusError, ValueError) as err:
                self.record_pod_event("update", sts, pod, err)
                raise
            if consistent:
                return
            attempted = True
            try:
                await self._pods(sts["metadata"]["namespace"]).update(pod)
                failure = None
                break
            except errors.StatusError as err:
                failure = err
                if err.code != 409:
                    break
                pod = await self._pods(sts["metadata"]["namespace"]).get(pod["metadata"]["name"])
        if attempted:
            self.record_pod_event("update", sts, pod, failure)
        if failure is not None:
            raise failure

    async def delete_stateful_pod(self, sts: Object, pod: Object) -> None:
        try:
            await self._pods(pod["metadata"].get("namespace", "")).delete(pod["metadata"]["name"])
        except errors.StatusError as err:
            self.record_pod_event("delete", sts, pod, err)
            raise
        self.record_pod_event("delete", sts, pod, None)

    # ---- claims ----

    def _claim(self, namespace: str, name: str) -> Object | None:
        return self.claims.get_by_name(namespace, name)

    async def create_claims(self, sts: Object, pod: Object) -> None:
        """createPersistentVolumeClaims: each missing claim created; one being deleted is an error."""
        failures = []
        for claim in utils.claims_for(sts, pod).values():
            meta = claim["metadata"]
            existing = self._claim(meta["namespace"], meta["name"])
            if existing is None:
                try:
                    await self._claims(meta["namespace"]).create(claim)
                except errors.StatusError as err:
                    failures.append(f"failed to create PVC {meta['name']}: {err.message}")
                    if not _already_exists(err):
                        self._record_claim_event("create", sts, pod, claim, err)
                    continue
                self._record_claim_event("create", sts, pod, claim, None)
            elif existing["metadata"].get("deletionTimestamp"):
                failures.append(f"pvc {meta['name']} is being deleted")
        if failures:
            raise ValueError(failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]")

    async def create_missing_claims(self, sts: Object, pod: Object) -> None:
        await self.create_claims(sts, pod)
        try:
            await self.update_claims_for_retention_policy(sts, pod)
        except (errors.StatusError, ValueError) as err:
            self.record_pod_event("update", sts, pod, err)
            raise

    def _pod_claims(self, sts: Object, pod: Object) -> list[tuple[str, Object | None]]:
        ordinal = utils.ordinal_of(pod)
        namespace = sts["metadata"].get("namespace", "")
        names = [utils.claim_name(sts, t, ordinal) for t in utils.claim_templates(sts)]
        return [(name, self._claim(namespace, name)) for name in names]

    def claims_match_retention_policy(self, sts: Object, pod: Object) -> bool:
        return all(
            claim is None or utils.claim_owner_up_to_date(claim, sts, pod)
            for _, claim in self._pod_claims(sts, pod)
        )

    async def update_claims_for_retention_policy(self, sts: Object, pod: Object) -> None:
        for name, claim in self._pod_claims(sts, pod):
            if claim is None:
                continue  # picked up on a later sync
            if utils.has_unexpected_controller(claim, sts, pod):
                self.recorder.event(
                    sts,
                    WARNING,
                    "ConflictingController",
                    f"PersistentVolumeClaim {name} has a conflicting OwnerReference that acts as a "
                    "manging controller, the retention policy is ignored for this claim",
                )
            if utils.claim_owner_up_to_date(claim, sts, pod):
                continue
            claim = copy.deepcopy(claim)
            utils.update_claim_owner_refs(claim, sts, pod)
            try:
                await self._claims(claim["metadata"]["namespace"]).update(claim)
            except errors.StatusError as err:
                raise ValueError(
                    f"could not update claim {name} for delete policy ownerRefs: {err.message}"
                ) from err

    def pod_claim_is_stale(self, sts: Object, pod: Object) -> bool:
        """With whenScaled Delete, a claim still referencing an earlier pod of this name blocks creating
        the pod until the garbage collector removed it."""
        if utils.retention_policy(sts)[1] == utils.RETAIN:
            return False
        for claim in utils.claims_for(sts, pod).values():
            existing = self._claim(claim["metadata"]["namespace"], claim["metadata"]["name"])
            if existing is not None and utils.has_stale_owner_ref(existing, pod, "v1", "Pod"):
                return True
        return False

    def is_not_found(self, err: BaseException) -> bool:
        return _is_not_found(err)
