"""NodeResourcesFit and NodeResourcesBalancedAllocation: a pod's requests (cpu, memory,
ephemeral-storage, scalar resources, one more pod) must fit in what the node has left of its
allocatable; nodes are scored by how much is left (LeastAllocated, cpu and memory weighted 1 each,
with the non-zero requests) and by how evenly cpu and memory would be used."""

from __future__ import annotations

import math
from typing import Any

from ..interface import Plugin
from ..nodeinfo import NodeInfo, PodInfo
from ..types import MAX_NODE_SCORE, SKIP, SUCCESS, CycleState, Status, unschedulable

Object = dict[str, Any]
FIT = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"


def _pod_info(state: CycleState, pod: Object) -> PodInfo:
    info = state.data.get(FIT)
    if info is None:
        info = state.data[FIT] = PodInfo.of(pod)
    return info


def insufficient_resources(info: PodInfo, node: NodeInfo) -> list[str]:
    """fitsRequest: the reasons the node cannot take the pod, in upstream's order."""
    reasons = []
    if len(node.pods) + 1 > node.allocatable.allowed_pods:
        reasons.append(TOO_MANY_PODS)
    request, free, used = info.request, node.allocatable, node.requested
    if request.is_zero():
        return reasons
    for name, want, have, taken in (
        ("cpu", request.milli_cpu, free.milli_cpu, used.milli_cpu),
        ("memory", request.memory, free.memory, used.memory),
        ("ephemeral-storage", request.ephemeral_storage, free.ephemeral_storage, used.ephemeral_storage),
    ):
        if want > 0 and want > have - taken:
            reasons.append(f"Insufficient {name}")
    for name, want in sorted(request.scalar.items()):
        if want > 0 and want > free.scalar.get(name, 0) - used.scalar.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


class Fit(Plugin):
    name = FIT
    weight = 1

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        _pod_info(state, pod)
        return SUCCESS

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        reasons = insufficient_resources(_pod_info(state, pod), node)
        return unschedulable(*reasons) if reasons else SUCCESS

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        """LeastAllocated over cpu and memory, weight 1 each, counting non-zero requests."""
        info = _pod_info(state, pod)
        pairs = (
            (node.non_zero_requested.milli_cpu + info.non_zero.milli_cpu, node.allocatable.milli_cpu),
            (node.non_zero_requested.memory + info.non_zero.memory, node.allocatable.memory),
        )
        scores = [least_requested_score(req, alloc) for req, alloc in pairs if alloc != 0]
        return sum(scores) // len(scores) if scores else 0


class BalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"
    weight = 1
    filters = False

    def pre_score(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        request = _pod_info(state, pod).request
        return SKIP if request.milli_cpu == 0 and request.memory == 0 else SUCCESS

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        request = _pod_info(state, pod).request
        pairs = (
            (node.requested.milli_cpu + request.milli_cpu, node.allocatable.milli_cpu),
            (node.requested.memory + request.memory, node.allocatable.memory),
        )
        fractions = [min(req / alloc, 1.0) for req, alloc in pairs if alloc != 0]
        std = 0.0
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        return int((1 - std) * MAX_NODE_SCORE)
