"""NodeName: a pod naming a node (spec.nodeName) fits that node only."""

from __future__ import annotations

from typing import Any

from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import SUCCESS, CycleState, Status, unresolvable

Object = dict[str, Any]
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = "NodeName"

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        wanted = (pod.get("spec") or {}).get("nodeName")
        return SUCCESS if not wanted or wanted == node.name else unresolvable(ERR_REASON)
