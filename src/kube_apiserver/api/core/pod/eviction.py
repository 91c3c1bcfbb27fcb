"""pods/eviction: delete a pod unless a PodDisruptionBudget forbids it (pkg/registry/core/pod/storage/
eviction.go). The budgets are read and updated through policy/v1's own storage. Before the delete, the
pod's DisruptionTarget condition says it is being evicted (addConditionAndDeletePod), written through
the pods/status storage."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from ....apimachinery import errors
from ....apimachinery.meta import now_rfc3339
from ....registry.context import Context
from ....registry.options import DeleteOptions, ListQuery
from ....registry.rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc
from ....registry.store import Store
from ....registry.subresource import StatusREST
from ....storage.factory import StorageFactory
from ...policy import poddisruptionbudget
from .binding import success
from .disruption import covering, decremented, still_processing, unhealthy_may_go

# The condition an eviction sets before it deletes (podutil.UpdatePodCondition's new condition).
DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                     "message": "Eviction API: evicting"}

Object = dict[str, Any]
CONFLICT_RETRIES = 20
MULTIPLE_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _can_ignore_budgets(pod: Object) -> bool:
    """canIgnorePDB: terminal, pending or terminating pods go without a budget check."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _enforce_version(pod: Object) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


class EvictionREST:
    def __init__(self, pods: Store, storage: StorageFactory, status: StatusREST | None = None):
        self.info = ResourceInfo("policy", "v1", "pods", "Eviction", "", True, subresource="eviction")
        self.pods = pods
        self.status = status  # pods/status: where the DisruptionTarget condition is written
        budgets = poddisruptionbudget.new_rest(storage)
        self.budgets, self.budget_status = budgets["poddisruptionbudgets"], budgets["poddisruptionbudgets/status"]

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        name = (obj.get("metadata") or {}).get("name") or ""
        if (options or {}).get("name") != name:
            raise errors.bad_request("name in URL does not match name in Eviction object")
        delete_options = DeleteOptions.from_object(obj.get("deleteOptions"), ctx.dry_run)
        if create_validation is not None:
            await create_validation(ctx, obj)
        pod = await self.pods.get(ctx, name)
        if _can_ignore_budgets(pod):
            await self._delete(ctx, name, self._pinned(delete_options, pod) if _enforce_version(pod) else delete_options)
            return success()
        budgets = covering((await self.budgets.list(ctx, ListQuery()))["items"], pod)
        if len(budgets) > 1:
            raise errors.StatusError(500, "", MULTIPLE_BUDGETS)
        pinned = False
        if budgets:
            if unhealthy_may_go(pod, budgets[0]):
                pinned = True
            else:
                await self._spend(ctx, budgets[0], name, delete_options.dry_run)
        options_used = self._pinned(delete_options, pod) if pinned else delete_options
        try:
            await self._delete(ctx, name, options_used)
        except errors.StatusError as err:
            if err.code == 409 and pinned and delete_options.preconditions_resource_version is None:
                raise still_processing(budgets[0]["metadata"]["name"]) from None
            raise
        return success()

    @staticmethod
    def _pinned(options: DeleteOptions, pod: Object) -> DeleteOptions:
        if options.preconditions_resource_version is not None:
            return options
        return replace(options, preconditions_resource_version=pod["metadata"].get("resourceVersion"))

    async def _delete(self, ctx: Context, name: str, options: DeleteOptions) -> None:
        if options.dry_run and not ctx.dry_run:
            ctx = replace(ctx, dry_run=True)
        if not ctx.dry_run and self.status is not None:
            options = await self._add_disruption_condition(ctx, name, options)
        await self.pods.delete(ctx, name, None, options)

    async def _add_disruption_condition(self, ctx: Context, name: str, options: DeleteOptions) -> DeleteOptions:
        """addConditionAndDeletePod's update: the latest pod (the delete's preconditions checked against
        it) with the DisruptionTarget condition; a resourceVersion precondition moves to the pod written."""

        async def with_condition(ctx: Context, latest: Object | None) -> Object:
            if latest is None:
                raise errors.not_found("pods", "", name)
            meta = latest["metadata"]
            uid, rv = options.preconditions_uid, options.preconditions_resource_version
            if uid and uid != meta.get("uid"):
                raise errors.conflict("Pod", "", name, f"Precondition failed: UID in precondition: {uid}, "
                                      f"UID in object meta: {meta.get('uid')}")
            if rv and rv != meta.get("resourceVersion"):
                raise errors.conflict("Pod", "", name, f"Precondition failed: ResourceVersion in precondition: "
                                      f"{rv}, ResourceVersion in object meta: {meta.get('resourceVersion')}")
            pod = copy.deepcopy(latest)
            _update_condition(pod.setdefault("status", {}), DISRUPTION_TARGET)
            return pod

        assert self.status is not None
        updated, _ = await self.status.update(ctx, name, UpdatedObjectInfo(name, with_condition))
        if options.preconditions_resource_version:
            options = replace(options, preconditions_resource_version=updated["metadata"].get("resourceVersion"))
        return options

    async def _spend(self, ctx: Context, pdb: Object, pod_name: str, dry_run: bool) -> None:
        """checkAndDecrement, re-reading the budget when its status update conflicts."""
        for _ in range(CONFLICT_RETRIES):
            updated = decremented(pdb, pod_name, dry_run)
            if updated is None:
                return
            try:
                await self.budget_status.update(ctx, pdb["metadata"]["name"],
                                                UpdatedObjectInfo(pdb["metadata"]["name"], _returning(updated)))
                return
            except errors.StatusError as err:
                if err.code != 409:
                    raise
            pdb = await self.budgets.get(ctx, pdb["metadata"]["name"])
        raise errors.timeout(f'couldn\'t update PodDisruptionBudget "{pdb["metadata"]["name"]}" due to conflicts')


def _update_condition(status: Object, wanted: Object) -> None:
    """podutil.UpdatePodCondition: the transition time moves only when the status does."""
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == wanted["type"]:
            if condition.get("status") != wanted["status"]:
                condition["lastTransitionTime"] = now_rfc3339()
            condition.update(wanted)
            return
    conditions.append({**wanted, "lastTransitionTime": now_rfc3339()})


def _returning(obj: Object) -> Any:
    async def transform(ctx: Context, old: Object | None) -> Object:
        return obj
    return transform
