"""PodTopologySpread: each DoNotSchedule constraint of the pod (maxSkew, topologyKey, labelSelector,
matchLabelKeys, minDomains) must hold if the pod lands on the node; ScheduleAnyway constraints score
nodes, fewer matching pods in the node's domain scoring higher. A pod without constraints of its own
gets the cluster's default ones (hostname maxSkew 3, zone maxSkew 5, both ScheduleAnyway) over the
selector of the Services and the controller selecting it. Nodes the pod's node affinity excludes do
not count (nodeAffinityPolicy Honor); taints are not looked at (nodeTaintsPolicy Ignore)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ....api.core.scheduling_helpers import required_node_affinity_matches
from ....apimachinery.labels import Selector, SelectorParseError, selector_from_label_selector
from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import ALL_NODES, MAX_NODE_SCORE, SKIP, SUCCESS, CycleState, Status, unresolvable, unschedulable

Object = dict[str, Any]
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
SYSTEM_DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))  # ScheduleAnyway
DefaultSelector = Callable[[Object], Selector | None]


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1


def _with_match_label_keys(selector: Any, constraint: Object, labels: dict[str, str]) -> Any:
    keys = constraint.get("matchLabelKeys")
    extra = [
        {"key": k, "operator": "In", "values": [labels[k]]}
        for k in (keys if isinstance(keys, list) else [])
        if isinstance(k, str) and k in labels
    ]
    if not extra or not isinstance(selector, dict):
        return selector
    return {**selector, "matchExpressions": [*(selector.get("matchExpressions") or []), *extra]}


def constraints(pod: Object, when: str) -> list[Constraint]:
    """The pod's well-formed constraints with that whenUnsatisfiable; malformed ones are skipped."""
    found = (pod.get("spec") or {}).get("topologySpreadConstraints")
    labels = (pod.get("metadata") or {}).get("labels") or {}
    out = []
    for c in found if isinstance(found, list) else []:
        if not isinstance(c, dict) or c.get("whenUnsatisfiable") != when:
            continue
        try:
            selector = selector_from_label_selector(_with_match_label_keys(c.get("labelSelector"), c, labels))
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


def _counts_nodes(pod: Object, node: NodeInfo, keys: list[str]) -> bool:
    """A node whose domains count: all the keys labelled, and the pod's node affinity matching."""
    if not all(key in node.labels for key in keys):
        return False
    try:
        return required_node_affinity_matches(pod, node.node or {})
    except (AttributeError, TypeError):
        return False


def matching_pods(node: NodeInfo, selector: Selector, namespace: str) -> int:
    count = 0
    for info in node.pods.values():
        meta = info.pod.get("metadata") or {}
        if (
            meta.get("namespace") == namespace
            and not meta.get("deletionTimestamp")
            and selector.matches(meta.get("labels") or {})
        ):
            count += 1
    return count


@dataclass
class _FilterState:
    constraints: list[Constraint]
    counts: dict[tuple[str, str], int]
    min_match: dict[str, int]


@dataclass
class _ScoreState:
    constraints: list[Constraint]
    counts: dict[tuple[str, str], int]
    weights: list[float]
    ignored: set[str]


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
    weight = 2

    def __init__(self, default_selector: DefaultSelector | None = None):
        self.default_selector: DefaultSelector = default_selector or (lambda _: None)

    # ---- filter ----

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        hard = constraints(pod, DO_NOT_SCHEDULE)
        if not hard:
            return SKIP
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        keys = [c.topology_key for c in hard]
        counts: dict[tuple[str, str], int] = {}
        for node in nodes:
            if not _counts_nodes(pod, node, keys):
                continue
            for c in hard:
                pair = (c.topology_key, node.labels[c.topology_key])
                counts[pair] = counts.get(pair, 0) + matching_pods(node, c.selector, namespace)
        min_match = {}
        for c in hard:
            domains = [n for (key, _), n in counts.items() if key == c.topology_key]
            min_match[c.topology_key] = 0 if len(domains) < c.min_domains else min(domains, default=0)
        state.data[self.name] = _FilterState(hard, counts, min_match)
        return SUCCESS

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        spread: _FilterState | None = state.data.get(self.name)
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

    # ---- score ----

    def _soft_constraints(self, pod: Object) -> tuple[list[Constraint], bool]:
        """The pod's ScheduleAnyway constraints, or the system defaults (and whether they are)."""
        if (pod.get("spec") or {}).get("topologySpreadConstraints"):
            return constraints(pod, SCHEDULE_ANYWAY), False
        selector = self.default_selector(pod)
        if selector is None or selector.empty() or selector.matches_nothing():
            return [], True
        return [Constraint(skew, key, selector) for key, skew in SYSTEM_DEFAULT_CONSTRAINTS], True

    def pre_score(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        soft, defaulted = self._soft_constraints(pod)
        if not soft:
            return SKIP
        keys = [c.topology_key for c in soft]
        ignored = set() if defaulted else {n.name for n in nodes if not all(k in n.labels for k in keys)}
        counts: dict[tuple[str, str], int] = {}
        for node in nodes:
            if node.name not in ignored:
                for c in soft:
                    if c.topology_key != HOSTNAME and c.topology_key in node.labels:
                        counts[(c.topology_key, node.labels[c.topology_key])] = 0
        weights = []
        for c in soft:
            size = (
                len(nodes) - len(ignored)
                if c.topology_key == HOSTNAME
                else sum(1 for key, _ in counts if key == c.topology_key)
            )
            weights.append(math.log(size + 2))
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        for node in state.data.get(ALL_NODES) or nodes:
            if not _counts_nodes(pod, node, [] if defaulted else keys):
                continue
            for c in soft:
                pair = (c.topology_key, node.labels.get(c.topology_key, ""))
                if c.topology_key != HOSTNAME and pair in counts:
                    counts[pair] += matching_pods(node, c.selector, namespace)
        state.data[f"PreScore{self.name}"] = _ScoreState(soft, counts, weights, ignored)
        return SUCCESS

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        spread: _ScoreState = state.data[f"PreScore{self.name}"]
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        total = 0.0
        for c, weight in zip(spread.constraints, spread.weights, strict=True):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME:
                count = matching_pods(node, c.selector, namespace)
            else:
                count = spread.counts.get((c.topology_key, value), 0)
            total += count * weight + (c.max_skew - 1)
        return round(total)

    def normalize_scores(self, state: CycleState, pod: Object, scores: dict[str, int]) -> None:
        """Fewer matching pods score higher; nodes lacking a constraint's key score 0."""
        ignored = state.data[f"PreScore{self.name}"].ignored
        counted = [s for name, s in scores.items() if name not in ignored]
        low, high = min(counted, default=0), max(counted, default=0)
        for name, score in scores.items():
            if name in ignored:
                scores[name] = 0
            elif high == 0:
                scores[name] = MAX_NODE_SCORE
            else:
                scores[name] = MAX_NODE_SCORE * (high + low - score) // high
