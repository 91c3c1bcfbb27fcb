"""NodePorts: a pod's host ports must be free on the node (same protocol and port on an overlapping
host IP are taken)."""

from __future__ import annotations

from typing import Any

from ..interface import Plugin
from ..nodeinfo import NodeInfo, host_ports
from ..types import SKIP, SUCCESS, CycleState, Status, unschedulable

Object = dict[str, Any]
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts(Plugin):
    name = "NodePorts"

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        state.data[self.name] = host_ports(pod)
        return SUCCESS if state.data[self.name] else SKIP

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        wanted = state.data.get(self.name)
        if wanted is None:
            wanted = host_ports(pod)
        return unschedulable(ERR_REASON) if wanted and node.port_conflicts(wanted) else SUCCESS
