"""rollback.go: the deprecated.deployment.rollback.to annotation (what extensions/v1beta1's rollback
subresource wrote) sets the template back to that revision's and is cleared. `kubectl rollout undo`
does not use it: it patches the template from the old ReplicaSet itself, which rolls out as any
template change does."""

from __future__ import annotations

from typing import Any

from . import util
from .sync import NORMAL, WARNING, DeploymentSync, get_rollback_to

Object = dict[str, Any]


class RollbackMixin(DeploymentSync):
    async def rollback(self, d: Object, rs_list: list[Object]) -> None:
        new_rs, old_sets = await self.get_all_replica_sets_and_sync_revision(d, rs_list, True)
        all_sets = [rs for rs in (*old_sets, new_rs) if rs is not None]
        to_revision = get_rollback_to(d) or 0
        if to_revision == 0:
            to_revision = util.last_revision(all_sets)
            if to_revision == 0:
                self.recorder.event(
                    d, WARNING, util.ROLLBACK_REVISION_NOT_FOUND, "Unable to find last revision."
                )
                await self._update_and_clear_rollback_to(d)
                return
        for rs in all_sets:
            try:
                rs_revision = util.revision(rs)
            except ValueError:
                continue
            if rs_revision == to_revision:
                if await self._rollback_to_template(d, rs):
                    self.recorder.event(
                        d,
                        NORMAL,
                        util.ROLLBACK_DONE,
                        f'Rolled back deployment "{d["metadata"]["name"]}" to revision {to_revision}',
                    )
                return
        self.recorder.event(
            d, WARNING, util.ROLLBACK_REVISION_NOT_FOUND, "Unable to find the revision to rollback to."
        )
        await self._update_and_clear_rollback_to(d)

    async def _rollback_to_template(self, d: Object, rs: Object) -> bool:
        performed = not util.equal_ignore_hash(util.template_of(d), util.template_of(rs))
        if performed:
            util.set_from_replica_set_template(d, util.template_of(rs))
            util.set_deployment_annotations_to(d, rs)
        else:
            self.recorder.event(
                d,
                WARNING,
                util.ROLLBACK_TEMPLATE_UNCHANGED,
                "The rollback revision contains the same template as current deployment "
                f'"{d["metadata"]["name"]}"',
            )
        await self._update_and_clear_rollback_to(d)
        return performed

    async def _update_and_clear_rollback_to(self, d: Object) -> None:
        (d["metadata"].get("annotations") or {}).pop(util.DEPRECATED_ROLLBACK_TO, None)
        await self.deployments_api(d["metadata"]["namespace"]).update(d)
