"""TaintToleration: a node with a NoSchedule or NoExecute taint the pod does not tolerate is filtered
out; nodes are scored lower for each PreferNoSchedule taint the pod does not tolerate. The reason does
not name the taint (v1.34.2 on, kubernetes#134740: taint values stay out of pod statuses)."""

from __future__ import annotations

from typing import Any

from ....api.core.scheduling_helpers import tolerations_tolerate, untolerated_taint
from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import SUCCESS, CycleState, Status, default_normalize_score, unresolvable

Object = dict[str, Any]
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"


def tolerations(pod: Object) -> list[Object]:
    found = (pod.get("spec") or {}).get("tolerations")
    return [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []


def taints(node: NodeInfo) -> list[Object]:
    found = (node.node or {}).get("spec", {}).get("taints")
    return [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []


class TaintToleration(Plugin):
    name = "TaintToleration"
    weight = 3

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        if untolerated_taint(taints(node), tolerations(pod)) is None:
            return SUCCESS
        return unresolvable(ERR_REASON_NOT_MATCH)

    def pre_score(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        state.data[self.name] = [
            t for t in tolerations(pod) if t.get("effect") in (None, "", "PreferNoSchedule")
        ]
        return SUCCESS

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        """How many PreferNoSchedule taints the pod does not tolerate (fewer is better)."""
        prefer = state.data.get(self.name) or []
        return sum(
            1
            for taint in taints(node)
            if taint.get("effect") == "PreferNoSchedule" and not tolerations_tolerate(prefer, taint)
        )

    def normalize_scores(self, state: CycleState, pod: Object, scores: dict[str, int]) -> None:
        default_normalize_score(scores, reverse=True)
