"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods tolerating the
node.kubernetes.io/unschedulable:NoSchedule taint."""

from __future__ import annotations

from typing import Any

from ....api.core.scheduling_helpers import tolerations_tolerate
from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import SUCCESS, CycleState, Status, unresolvable

Object = dict[str, Any]
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        if not (node.node or {}).get("spec", {}).get("unschedulable"):
            return SUCCESS
        if tolerations_tolerate(_tolerations(pod), UNSCHEDULABLE_TAINT):
            return SUCCESS
        return unresolvable(ERR_REASON_UNSCHEDULABLE)


def _tolerations(pod: Object) -> list[Object]:
    tolerations = (pod.get("spec") or {}).get("tolerations")
    return [t for t in tolerations if isinstance(t, dict)] if isinstance(tolerations, list) else []
