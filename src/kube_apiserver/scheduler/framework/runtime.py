"""The framework runtime (frameworkImpl): runs the plugins' PreFilter and Filter over the nodes (a
node's first rejection is its status), then PreScore, Score, NormalizeScore and the weights; and the
FitError that tells why no node fit, with the preemption step's answer appended."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from .interface import Plugin
from .nodeinfo import NodeInfo
from .types import ALL_NODES, Code, CycleState, Status

log = logging.getLogger("kube_apiserver.scheduler")
Object = dict[str, Any]
NO_NODE_AVAILABLE = "0/{} nodes are available"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"
# The DynamicResources plugin's PostFilter runs first: a pod without resource claims has none to free.
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"


def _error_message(step: str, plugin: str, err: Exception) -> str:
    """The frameworkImpl's wrapping of a plugin's error, per extension point."""
    if step == "Filter":
        return f'running "{plugin}" filter plugin: {err}'
    if step in ("Score", "NormalizeScore"):
        return f'running Score plugins: plugin "{plugin}" failed with: {err}'
    return f'running {step} plugin "{plugin}": {err}'


@dataclass
class Diagnosis:
    node_statuses: dict[str, Status] = field(default_factory=dict)
    pre_filter_message: str = ""
    absent_status: Status | None = None  # what the nodes a PreFilterResult left out count as


@dataclass
class FitError(Exception):
    pod: Object
    num_all_nodes: int
    diagnosis: Diagnosis

    def _histogram(self, reasons: Counter[str]) -> str:
        return ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))

    def filter_message(self) -> str:
        """FitError.Error without the PostFilter part: "0/3 nodes are available: 1 ..., 2 ...."."""
        message = NO_NODE_AVAILABLE.format(self.num_all_nodes) + ":"
        if self.diagnosis.pre_filter_message:
            return f"{message} {self.diagnosis.pre_filter_message}."
        reasons: Counter[str] = Counter()
        for status in self.diagnosis.node_statuses.values():
            reasons.update(status.reasons)
        absent = self.num_all_nodes - len(self.diagnosis.node_statuses)
        if self.diagnosis.absent_status is not None and absent > 0:
            for reason in self.diagnosis.absent_status.reasons:
                reasons[reason] += absent
        histogram = self._histogram(reasons)
        return f"{message} {histogram}." if histogram else message

    def preemption_message(self) -> str:
        """What DefaultPreemption answers when it finds nothing to preempt (this scheduler never
        preempts): nodes rejected as unresolvable are not helped by preemption, the rest had no victims."""
        if (self.pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return "preemption: not eligible due to preemptionPolicy=Never."
        reasons: Counter[str] = Counter()
        for status in self.diagnosis.node_statuses.values():
            unresolvable = status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            reasons[PREEMPTION_NOT_HELPFUL if unresolvable else NO_PREEMPTION_VICTIMS] += 1
        reasons[PREEMPTION_NOT_HELPFUL] += self.num_all_nodes - len(self.diagnosis.node_statuses)
        reasons = Counter({k: v for k, v in reasons.items() if v > 0})
        return f"preemption: {NO_NODE_AVAILABLE.format(self.num_all_nodes)}: {self._histogram(reasons)}."

    def __str__(self) -> str:
        return f"{self.filter_message()} {NO_CLAIMS_TO_DEALLOCATE}, {self.preemption_message()}"


class Framework:
    def __init__(self, plugins: list[Plugin]):
        self.plugins = plugins

    def _guarded(self, plugin: Plugin, step: str, call: Any, *args: Any) -> Any:
        """A plugin that raises on a bad object is a failed attempt for this pod, not a dead loop."""
        try:
            return call(*args)
        except Exception as err:  # noqa: BLE001 - any bug or malformed field: the pod is rejected
            log.exception("%s %s failed", plugin.name, step)
            return Status(Code.ERROR, (_error_message(step, plugin.name, err),), plugin.name)

    def find_nodes_that_fit(
        self, pod: Object, nodes: list[NodeInfo], limit: int | None = None
    ) -> tuple[CycleState, list[NodeInfo], int]:
        """The feasible nodes (at most `limit`) and how many nodes were looked at; FitError (or an Error
        status as RuntimeError) when none."""
        state = CycleState()
        state.data[ALL_NODES] = nodes  # what scoring counts pods on, beyond the feasible nodes
        active: list[Plugin] = []
        diagnosis = Diagnosis()
        for plugin in self.plugins:
            if not plugin.filters:
                continue
            status = self._guarded(plugin, "PreFilter", plugin.pre_filter, state, pod, nodes)
            if status.code == Code.ERROR:
                raise RuntimeError(status.message())
            if status.rejected:
                status = replace(status, plugin=plugin.name)
                diagnosis.pre_filter_message = status.message()
                diagnosis.node_statuses = {n.name: status for n in nodes}
                raise FitError(pod, len(nodes), diagnosis)
            if status.code != Code.SKIP:
                active.append(plugin)
        candidates = self._pre_filter_result(state, nodes, diagnosis)
        feasible: list[NodeInfo] = []
        processed = 0
        for node in candidates:
            if limit is not None and len(feasible) >= limit:
                break
            processed += 1
            status = self._filter_node(state, pod, node, active)
            if status.code == Code.SUCCESS:
                feasible.append(node)
            elif status.code == Code.ERROR:
                raise RuntimeError(status.message())
            else:
                diagnosis.node_statuses[node.name] = status
        if not feasible:
            raise FitError(pod, len(nodes), diagnosis)
        return state, feasible, processed

    def _pre_filter_result(
        self, state: CycleState, nodes: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        """The nodes the PreFilter plugins left to filter; the others are reported as not satisfying them."""
        if not state.node_names:
            return nodes
        allowed = set.intersection(*state.node_names.values())
        plugins = " ".join(sorted(state.node_names))
        diagnosis.absent_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"node(s) didn't satisfy plugin(s) [{plugins}]",)
        )
        return [node for node in nodes if node.name in allowed]

    def _filter_node(self, state: CycleState, pod: Object, node: NodeInfo, plugins: list[Plugin]) -> Status:
        for plugin in plugins:
            status = self._guarded(plugin, "Filter", plugin.filter, state, pod, node)
            if status.code != Code.SUCCESS:
                return replace(status, plugin=plugin.name)
        return Status(Code.SUCCESS)

    def score_nodes(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> dict[str, int]:
        """Each node's weighted sum of the normalized plugin scores."""
        totals = {node.name: 0 for node in nodes}
        for plugin in self.plugins:
            if not plugin.weight:
                continue
            status = self._guarded(plugin, "PreScore", plugin.pre_score, state, pod, nodes)
            if status.code != Code.SUCCESS:
                continue  # skipped, or broken by a malformed field: no opinion on any node
            scores = {}
            for node in nodes:
                score = self._guarded(plugin, "Score", plugin.score, state, pod, node)
                scores[node.name] = score if isinstance(score, int) else 0
            self._guarded(plugin, "NormalizeScore", plugin.normalize_scores, state, pod, scores)
            for name, score in scores.items():
                totals[name] += score * plugin.weight
        return totals
