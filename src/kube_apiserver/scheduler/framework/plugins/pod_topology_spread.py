"""PodTopologySpread, filter only: each DoNotSchedule constraint of the pod (maxSkew, topologyKey,
labelSelector, minDomains) holds if the pod lands on the node; nodes the pod's node affinity excludes
do not count as domains (nodeAffinityPolicy Honor), taints are ignored (nodeTaintsPolicy Ignore).
Scoring of ScheduleAnyway constraints and the cluster-level default constraints are left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....api.core.scheduling_helpers import required_node_affinity_matches
from ....apimachinery.labels import Selector, SelectorParseError, selector_from_label_selector
from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import SKIP, SUCCESS, CycleState, Status, unresolvable, unschedulable

Object = dict[str, Any]
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int


def hard_constraints(pod: Object) -> list[Constraint]:
    found = (pod.get("spec") or {}).get("topologySpreadConstraints")
    out = []
    for c in found if isinstance(found, list) else []:
        if not isinstance(c, dict) or c.get("whenUnsatisfiable") != "DoNotSchedule":
            continue
        try:
            selector = selector_from_label_selector(c.get("labelSelector"))
        except (SelectorParseError, AttributeError, TypeError, ValueError):
            continue
        max_skew, min_domains = c.get("maxSkew"), c.get("minDomains")
        if isinstance(max_skew, int) and isinstance(c.get("topologyKey"), str):
            out.append(
                Constraint(
                    max_skew, c["topologyKey"], selector, min_domains if isinstance(min_domains, int) else 1
                )
            )
    return out


@dataclass
class _State:
    constraints: list[Constraint]
    counts: dict[tuple[str, str], int]
    min_match: dict[str, int]


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        constraints = hard_constraints(pod)
        if not constraints:
            return SKIP
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        counts: dict[tuple[str, str], int] = {}
        for node in nodes:
            labels = node.labels
            if not all(c.topology_key in labels for c in constraints):
                continue
            try:
                if not required_node_affinity_matches(pod, node.node or {}):
                    continue
            except (AttributeError, TypeError):
                continue
            for c in constraints:
                pair = (c.topology_key, labels[c.topology_key])
                counts[pair] = counts.get(pair, 0) + sum(
                    1
                    for info in node.pods.values()
                    if (info.pod.get("metadata") or {}).get("namespace") == namespace
                    and not (info.pod.get("metadata") or {}).get("deletionTimestamp")
                    and c.selector.matches((info.pod.get("metadata") or {}).get("labels") or {})
                )
        min_match = {}
        for c in constraints:
            domains = [n for (key, _), n in counts.items() if key == c.topology_key]
            min_match[c.topology_key] = 0 if len(domains) < c.min_domains else min(domains, default=0)
        state.data[self.name] = _State(constraints, counts, min_match)
        return SUCCESS

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        spread: _State | None = state.data.get(self.name)
        if spread is None:
            return SUCCESS
        pod_labels = (pod.get("metadata") or {}).get("labels") or {}
        for c in spread.constraints:
            value = node.labels.get(c.topology_key)
            if value is None:
                return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            skew = (
                spread.counts.get((c.topology_key, value), 0) + self_match - spread.min_match[c.topology_key]
            )
            if skew > c.max_skew:
                return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return SUCCESS
