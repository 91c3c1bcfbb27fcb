"""progress.go: the Progressing condition over a rollout (ReplicaSetUpdated while it moves,
NewReplicaSetAvailable once complete, ProgressDeadlineExceeded when nothing moved for
progressDeadlineSeconds), the ReplicaFailure condition taken from the sets, and the requeue that
checks the deadline again when nothing else would."""

from __future__ import annotations

from typing import Any

from . import util
from .sync import DeploymentSync

Object = dict[str, Any]


class ProgressMixin(DeploymentSync):
    async def sync_rollout_status(
        self, all_sets: list[Object | None], new_rs: Object | None, d: Object
    ) -> None:
        new_status = self.calculate_status(all_sets, new_rs, d)
        if not util.has_progress_deadline(d):
            util.remove_condition(new_status, util.PROGRESSING)
        current = util.get_condition(util.status(d), util.PROGRESSING)
        complete = (
            new_status["replicas"] == new_status["updatedReplicas"]
            and current is not None
            and current.get("reason") == util.NEW_RS_AVAILABLE_REASON
        )
        if util.has_progress_deadline(d) and not complete:
            self._set_progressing(d, new_rs, new_status, current)
        failures = self._replica_failures(all_sets, new_rs)
        if failures:
            util.set_condition(new_status, failures[0])
        else:
            util.remove_condition(new_status, util.REPLICA_FAILURE)
        if not await self.write_status_if_changed(d, new_status):
            self.requeue_stuck_deployment(d, new_status)

    def _set_progressing(
        self, d: Object, new_rs: Object | None, new_status: Object, current: Object | None
    ) -> None:
        name = d["metadata"]["name"]
        subject = (
            f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs is not None else f'Deployment "{name}"'
        )
        if util.deployment_complete(d, new_status):
            util.set_condition(
                new_status,
                util.new_condition(
                    util.PROGRESSING,
                    "True",
                    util.NEW_RS_AVAILABLE_REASON,
                    f"{subject} has successfully progressed.",
                ),
            )
        elif util.deployment_progressing(d, new_status):
            condition = util.new_condition(
                util.PROGRESSING, "True", util.REPLICA_SET_UPDATED_REASON, f"{subject} is progressing."
            )
            if current is not None:
                if current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                # Progress moves lastUpdateTime even with the same reason: set_condition would keep the old one.
                util.remove_condition(new_status, util.PROGRESSING)
            util.set_condition(new_status, condition)
        elif util.deployment_timed_out(d, new_status, self.clock()):
            util.set_condition(
                new_status,
                util.new_condition(
                    util.PROGRESSING, "False", util.TIMED_OUT_REASON, f"{subject} has timed out progressing."
                ),
            )

    @staticmethod
    def _replica_failures(all_sets: list[Object | None], new_rs: Object | None) -> list[Object]:
        """The new set's ReplicaFailure conditions, else any set's."""
        for candidates in ([new_rs], all_sets):
            found = [
                util.replica_set_to_deployment_condition(c)
                for rs in candidates
                if rs is not None
                for c in util.status(rs).get("conditions") or ()
                if c.get("type") == util.REPLICA_FAILURE
            ]
            if found:
                return found
        return []

    def requeue_stuck_deployment(self, d: Object, new_status: Object) -> float:
        """A rollout with a deadline that nothing else will wake: checked again once the deadline passes.
        Returns the delay (-1: not requeued)."""
        current = util.get_condition(util.status(d), util.PROGRESSING)
        if not util.has_progress_deadline(d) or current is None:
            return -1.0
        if util.deployment_complete(d, new_status) or current.get("reason") == util.TIMED_OUT_REASON:
            return -1.0
        last_update = util.parse_time(current.get("lastUpdateTime")) or 0.0
        after = last_update + int(util.spec(d)["progressDeadlineSeconds"]) - self.clock()
        key = f"{d['metadata']['namespace']}/{d['metadata']['name']}"
        if after < 1.0:
            self.queue.add_rate_limited(key)
            return 0.0
        self.queue.add_after(key, after + 1.0)
        return after
