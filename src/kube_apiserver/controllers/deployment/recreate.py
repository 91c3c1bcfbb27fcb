"""recreate.go: the Recreate strategy. Old sets go to zero and the new set is made (or grown) only once
no old pod runs."""

from __future__ import annotations

from typing import Any

from ..controller_utils import pod_phase
from . import util
from .progress import ProgressMixin

Object = dict[str, Any]


class RecreateMixin(ProgressMixin):
    async def rollout_recreate(
        self, d: Object, rs_list: list[Object], pod_map: dict[str, list[Object]]
    ) -> None:
        new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        all_sets: list[Object | None] = [*old_sets, new_rs]
        if await self._scale_down_old_for_recreate(util.filter_active(old_sets), d):
            await self.sync_rollout_status(all_sets, new_rs, d)  # wait for the informers to see it
            return
        if old_pods_running(new_rs, old_sets, pod_map):
            await self.sync_rollout_status(all_sets, new_rs, d)
            return
        if new_rs is None:
            new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, True)
            all_sets = [*old_sets, new_rs]
        assert new_rs is not None
        await self.scale_replica_set_and_record_event(new_rs, util.replicas(d), d)
        if util.deployment_complete(d, util.status(d)):
            await self.cleanup_deployment(old_sets, d)
        await self.sync_rollout_status(all_sets, new_rs, d)

    async def _scale_down_old_for_recreate(self, old_sets: list[Object], d: Object) -> bool:
        scaled_any = False
        for rs in old_sets:
            if util.replicas(rs) == 0:
                continue
            scaled, _ = await self.scale_replica_set_and_record_event(rs, 0, d)
            scaled_any = scaled_any or scaled
        return scaled_any


def old_pods_running(new_rs: Object | None, old_sets: list[Object], pod_map: dict[str, list[Object]]) -> bool:
    """Any old set still counts replicas, or any pod of an old set has not finished (Unknown included)."""
    if util.actual_replica_count(old_sets) > 0:
        return True
    new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
    return any(
        pod_phase(pod) not in ("Failed", "Succeeded")
        for uid, pods in pod_map.items()
        if uid != new_uid
        for pod in pods
    )
