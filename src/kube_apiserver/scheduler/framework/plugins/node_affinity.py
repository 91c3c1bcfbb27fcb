"""NodeAffinity: spec.nodeSelector and the required node affinity filter nodes; the preferred terms'
weights add up to a node's score."""

from __future__ import annotations

from typing import Any

from ....api.core.scheduling_helpers import required_node_affinity_matches, term_matches
from ..interface import Plugin
from ..nodeinfo import NodeInfo
from ..types import SKIP, SUCCESS, CycleState, Status, default_normalize_score, unresolvable

Object = dict[str, Any]
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def _named_nodes(term: Any) -> set[str] | None:
    """The node names a term's matchFields metadata.name In requirements all allow (None: no such requirement)."""
    fields = term.get("matchFields") if isinstance(term, dict) else None
    names: set[str] | None = None
    for requirement in fields if isinstance(fields, list) else []:
        if (
            isinstance(requirement, dict)
            and requirement.get("key") == "metadata.name"
            and requirement.get("operator") == "In"
        ):
            values = {v for v in requirement.get("values") or [] if isinstance(v, str)}
            names = values if names is None else names & values
    return names


def _preferred_terms(pod: Object) -> list[Object]:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    terms = (
        (node_affinity or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, dict)
        else None
    )
    return [t for t in terms if isinstance(t, dict)] if isinstance(terms, list) else []


class NodeAffinity(Plugin):
    name = "NodeAffinity"
    weight = 2

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        """The nodes named by matchFields metadata.name In, when every term names some (a DaemonSet's
        pods): only those are filtered."""
        spec = pod.get("spec") or {}
        affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
        node_affinity = affinity.get("nodeAffinity") if isinstance(affinity.get("nodeAffinity"), dict) else {}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is None and not spec.get("nodeSelector"):
            return SKIP
        terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
        if not isinstance(terms, list) or not terms:
            return SUCCESS
        names: set[str] = set()
        for term in terms:
            term_names = _named_nodes(term)
            if term_names is None:
                return SUCCESS  # terms are ORed: a term without names lets every node through
            names |= term_names
        if not names:
            return unresolvable(ERR_REASON_CONFLICT)
        state.node_names[self.name] = names
        return SUCCESS

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        try:
            matches = required_node_affinity_matches(pod, node.node or {})
        except (AttributeError, TypeError):  # a malformed affinity matches no node
            matches = False
        return SUCCESS if matches else unresolvable(ERR_REASON_POD)

    def pre_score(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        terms = _preferred_terms(pod)
        state.data[self.name] = terms
        return SUCCESS if terms else SKIP

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        total = 0
        for term in state.data.get(self.name) or []:
            weight, preference = term.get("weight"), term.get("preference")
            if not isinstance(weight, int) or weight == 0 or not isinstance(preference, dict):
                continue
            try:
                if term_matches(preference, node.node or {}):
                    total += weight
            except (AttributeError, TypeError):
                continue
        return total

    def normalize_scores(self, state: CycleState, pod: Object, scores: dict[str, int]) -> None:
        default_normalize_score(scores)
