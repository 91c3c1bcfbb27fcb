"""rolling.go: the RollingUpdate strategy. The new set grows while the total stays within
replicas + maxSurge; old sets shrink (their unhealthy replicas first) while the available ones stay at
least replicas - maxUnavailable."""

from __future__ import annotations

from typing import Any

from . import util
from .progress import ProgressMixin

Object = dict[str, Any]


class RollingMixin(ProgressMixin):
    async def rollout_rolling(self, d: Object, rs_list: list[Object]) -> None:
        new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, True)
        assert new_rs is not None  # created when missing
        all_sets: list[Object | None] = [*old_sets, new_rs]
        if await self.reconcile_new_replica_set(all_sets, new_rs, d):
            await self.sync_rollout_status(all_sets, new_rs, d)
            return
        if await self.reconcile_old_replica_sets(all_sets, util.filter_active(old_sets), new_rs, d):
            await self.sync_rollout_status(all_sets, new_rs, d)
            return
        if util.deployment_complete(d, util.status(d)):
            await self.cleanup_deployment(old_sets, d)
        await self.sync_rollout_status(all_sets, new_rs, d)

    async def reconcile_new_replica_set(
        self, all_sets: list[Object | None], new_rs: Object, d: Object
    ) -> bool:
        if util.replicas(new_rs) == util.replicas(d):
            return False
        if util.replicas(new_rs) > util.replicas(d):
            scaled, _ = await self.scale_replica_set_and_record_event(new_rs, util.replicas(d), d)
            return scaled
        count = util.new_rs_new_replicas(d, [rs for rs in all_sets if rs is not None], new_rs)
        scaled, _ = await self.scale_replica_set_and_record_event(new_rs, count, d)
        return scaled

    async def reconcile_old_replica_sets(
        self, all_sets: list[Object | None], old_sets: list[Object], new_rs: Object, d: Object
    ) -> bool:
        old_pods = util.replica_count(old_sets)
        if old_pods == 0:
            return False  # nothing to scale down
        all_pods = util.replica_count(all_sets)
        min_available = util.replicas(d) - util.max_unavailable(d)
        new_unavailable = util.replicas(new_rs) - util.status_int(new_rs, "availableReplicas")
        # Scaling down more would leave fewer than min_available once the new set's unavailable pods
        # are counted out: they may never become available.
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old_sets, cleaned = await self._cleanup_unhealthy_replicas(old_sets, d, max_scaled_down)
        scaled_down = await self._scale_down_old_for_rolling_update([*old_sets, new_rs], old_sets, d)
        return cleaned + scaled_down > 0

    async def _cleanup_unhealthy_replicas(
        self, old_sets: list[Object], d: Object, max_cleanup: int
    ) -> tuple[list[Object], int]:
        """Old sets' unavailable replicas go first: removing them costs no availability."""
        old_sets = util.by_creation_timestamp(old_sets)
        total = 0
        for index, rs in enumerate(old_sets):
            if total >= max_cleanup:
                break
            available = util.status_int(rs, "availableReplicas")
            if util.replicas(rs) == 0 or util.replicas(rs) == available:
                continue
            count = min(max_cleanup - total, util.replicas(rs) - available)
            _, old_sets[index] = await self.scale_replica_set_and_record_event(
                rs, util.replicas(rs) - count, d
            )
            total += count
        return old_sets, total

    async def _scale_down_old_for_rolling_update(
        self, all_sets: list[Object], old_sets: list[Object], d: Object
    ) -> int:
        min_available = util.replicas(d) - util.max_unavailable(d)
        available = util.available_replica_count(all_sets)
        if available <= min_available:
            return 0
        to_scale_down = available - min_available
        total = 0
        for rs in util.by_creation_timestamp(old_sets):
            if total >= to_scale_down:
                break
            if util.replicas(rs) == 0:
                continue
            count = min(util.replicas(rs), to_scale_down - total)
            await self.scale_replica_set_and_record_event(rs, util.replicas(rs) - count, d)
            total += count
        return total
