"""InterPodAffinity: required pod affinity and anti-affinity of the incoming pod, and the required
anti-affinity of the pods already placed, filter nodes by topology domain (any topologyKey: the
domain is the node's value of that label); preferred terms of both sides score domains. A term with a
malformed selector matches nothing on an existing pod and fails the incoming pod's attempt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ....apimachinery.labels import Selector, SelectorParseError, selector_from_label_selector
from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import MAX_NODE_SCORE, SKIP, SUCCESS, Code, CycleState, Status, unresolvable, unschedulable

Object = dict[str, Any]
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1
NamespaceLabels = Callable[[str], dict[str, str] | None]
Counts = dict[tuple[str, str], int]


class TermError(ValueError):
    pass


@dataclass(frozen=True)
class AffinityTerm:
    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector | None
    topology_key: str
    weight: int = 0

    def matches(self, pod: Object, namespace_labels: NamespaceLabels) -> bool:
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or ""
        if namespace not in self.namespaces:
            if self.namespace_selector is None or not self.namespace_selector.matches(
                namespace_labels(namespace) or {}
            ):
                return False
        return self.selector.matches(meta.get("labels") or {})


def _with_label_keys(selector: Any, term: Object, labels: dict[str, str]) -> Any:
    """matchLabelKeys and mismatchLabelKeys: the pod's own values of those labels join the selector."""
    extra = [
        {"key": k, "operator": op, "values": [labels[k]]}
        for keys, op in ((term.get("matchLabelKeys"), "In"), (term.get("mismatchLabelKeys"), "NotIn"))
        for k in (keys if isinstance(keys, list) else [])
        if isinstance(k, str) and k in labels
    ]
    if not extra or not isinstance(selector, dict):
        return selector
    return {**selector, "matchExpressions": [*(selector.get("matchExpressions") or []), *extra]}


def parse_term(term: Any, pod: Object, weight: int = 0) -> AffinityTerm:
    if not isinstance(term, dict) or not isinstance(term.get("topologyKey"), str):
        raise TermError("a pod affinity term needs a topologyKey")
    meta = pod.get("metadata") or {}
    try:
        selector = selector_from_label_selector(
            _with_label_keys(term.get("labelSelector"), term, meta.get("labels") or {})
        )
        raw_ns_selector = term.get("namespaceSelector")
        ns_selector = None if raw_ns_selector is None else selector_from_label_selector(raw_ns_selector)
    except (SelectorParseError, AttributeError, TypeError, ValueError) as err:
        raise TermError(str(err)) from err
    namespaces = term.get("namespaces") if isinstance(term.get("namespaces"), list) else []
    names = frozenset(n for n in namespaces if isinstance(n, str))
    if not names and ns_selector is None:
        names = frozenset({meta.get("namespace") or ""})
    return AffinityTerm(selector, names, ns_selector, term["topologyKey"], weight)


def _section(pod: Object, kind: str, when: str) -> list[Any]:
    affinity = (pod.get("spec") or {}).get("affinity")
    section = affinity.get(kind) if isinstance(affinity, dict) else None
    terms = (
        section.get(f"{when}DuringSchedulingIgnoredDuringExecution") if isinstance(section, dict) else None
    )
    return terms if isinstance(terms, list) else []


def required_terms(pod: Object, kind: str) -> list[AffinityTerm]:
    return [parse_term(t, pod) for t in _section(pod, kind, "required")]


def preferred_terms(pod: Object, kind: str) -> list[AffinityTerm]:
    out = []
    for weighted in _section(pod, kind, "preferred"):
        if isinstance(weighted, dict) and isinstance(weighted.get("weight"), int):
            out.append(parse_term(weighted.get("podAffinityTerm"), pod, weighted["weight"]))
    return out


def _lenient(
    parse: Callable[[Object, str], list[AffinityTerm]], pod: Object, kind: str
) -> list[AffinityTerm]:
    """An existing pod's terms; malformed ones are ignored (that pod was placed already)."""
    try:
        return parse(pod, kind)
    except TermError:
        return []


@dataclass
class _FilterState:
    affinity: list[AffinityTerm]
    anti_affinity: list[AffinityTerm]
    affinity_counts: Counts = field(default_factory=dict)
    anti_affinity_counts: Counts = field(default_factory=dict)
    existing_anti_affinity_counts: Counts = field(default_factory=dict)


def _count(counts: Counts, node: NodeInfo, key: str, by: int = 1) -> None:
    value = node.labels.get(key)
    if value is not None:
        counts[(key, value)] = counts.get((key, value), 0) + by


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"
    weight = 2

    def __init__(self, namespace_labels: NamespaceLabels | None = None):
        self.namespace_labels: NamespaceLabels = namespace_labels or (lambda _: None)

    # ---- filter ----

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        try:
            filter_state = _FilterState(
                required_terms(pod, "podAffinity"), required_terms(pod, "podAntiAffinity")
            )
        except TermError as err:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"invalid pod affinity: {err}",))
        own_terms = bool(filter_state.affinity or filter_state.anti_affinity)
        for node in nodes:
            for info in node.pods.values():
                if own_terms or info.affinity:  # else nothing to count: skip the usual pod cheaply
                    self._count_existing(filter_state, pod, node, info.pod)
        state.data[self.name] = filter_state
        if not (
            filter_state.affinity or filter_state.anti_affinity or filter_state.existing_anti_affinity_counts
        ):
            return SKIP
        return SUCCESS

    def _count_existing(self, state: _FilterState, pod: Object, node: NodeInfo, existing: Object) -> None:
        for term in _lenient(required_terms, existing, "podAntiAffinity"):
            if term.matches(pod, self.namespace_labels):
                _count(state.existing_anti_affinity_counts, node, term.topology_key)
        if state.affinity and all(t.matches(existing, self.namespace_labels) for t in state.affinity):
            for term in state.affinity:
                _count(state.affinity_counts, node, term.topology_key)
        for term in state.anti_affinity:
            if term.matches(existing, self.namespace_labels):
                _count(state.anti_affinity_counts, node, term.topology_key)

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        filter_state: _FilterState | None = state.data.get(self.name)
        if filter_state is None:
            return SUCCESS
        if not self._satisfies_affinity(filter_state, pod, node):
            return unresolvable(ERR_REASON_AFFINITY)
        labels = node.labels
        if any(
            filter_state.anti_affinity_counts.get((t.topology_key, labels[t.topology_key]), 0) > 0
            for t in filter_state.anti_affinity
            if t.topology_key in labels
        ):
            return unschedulable(ERR_REASON_ANTI_AFFINITY)
        if any(filter_state.existing_anti_affinity_counts.get(item, 0) > 0 for item in labels.items()):
            return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        return SUCCESS

    def _satisfies_affinity(self, state: _FilterState, pod: Object, node: NodeInfo) -> bool:
        """Every term's domain on this node holds a matching pod; with no matching pod anywhere, the
        first pod of a group that matches its own terms may go anywhere its keys are labelled."""
        pods_exist = True
        for term in state.affinity:
            value = node.labels.get(term.topology_key)
            if value is None:
                return False
            if state.affinity_counts.get((term.topology_key, value), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        return not state.affinity_counts and all(
            t.matches(pod, self.namespace_labels) for t in state.affinity
        )

    # ---- score ----

    def pre_score(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        try:
            incoming = [
                *preferred_terms(pod, "podAffinity"),
                *(_negated(t) for t in preferred_terms(pod, "podAntiAffinity")),
            ]
        except TermError:
            incoming = []
        scores: Counts = {}
        for node in nodes:
            for info in node.pods.values():
                if incoming or info.affinity:
                    self._score_existing(scores, pod, incoming, node, info.pod)
        state.data[f"PreScore{self.name}"] = scores
        return SUCCESS if scores else SKIP

    def _score_existing(
        self, scores: Counts, pod: Object, incoming: list[AffinityTerm], node: NodeInfo, existing: Object
    ) -> None:
        for term in incoming:
            if term.matches(existing, self.namespace_labels):
                _count(scores, node, term.topology_key, term.weight)
        theirs = [
            *_lenient(preferred_terms, existing, "podAffinity"),
            *(_negated(t) for t in _lenient(preferred_terms, existing, "podAntiAffinity")),
            *(
                AffinityTerm(
                    t.selector, t.namespaces, t.namespace_selector, t.topology_key, HARD_POD_AFFINITY_WEIGHT
                )
                for t in _lenient(required_terms, existing, "podAffinity")
            ),
        ]
        for term in theirs:
            if term.matches(pod, self.namespace_labels):
                _count(scores, node, term.topology_key, term.weight)

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        scores: Counts = state.data.get(f"PreScore{self.name}") or {}
        return sum(scores.get(item, 0) for item in node.labels.items())

    def normalize_scores(self, state: CycleState, pod: Object, scores: dict[str, int]) -> None:
        if not scores:
            return
        low, high = min(scores.values()), max(scores.values())
        for name, score in scores.items():
            scores[name] = int(MAX_NODE_SCORE * (score - low) / (high - low)) if high > low else 0


def _negated(term: AffinityTerm) -> AffinityTerm:
    return AffinityTerm(
        term.selector, term.namespaces, term.namespace_selector, term.topology_key, -term.weight
    )
