"""mutatePodAffinity (MatchLabelKeysInPodAffinity, on by default in v1.34): a pod (anti-)affinity
term's matchLabelKeys / mismatchLabelKeys become requirements of its labelSelector at creation."""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]


def _apply(term: Object, labels: dict[str, str]) -> None:
    selector = term.get("labelSelector")
    if not isinstance(selector, dict) or not (term.get("matchLabelKeys") or term.get("mismatchLabelKeys")):
        return
    for keys, operator in ((term.get("matchLabelKeys") or [], "In"), (term.get("mismatchLabelKeys") or [], "NotIn")):
        for key in keys:
            if key in labels:
                selector.setdefault("matchExpressions", []).append(
                    {"key": key, "operator": operator, "values": [labels[key]]})


def apply_match_label_keys(spec: Object, labels: dict[str, str]) -> None:
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind)
        if not isinstance(terms, dict):
            continue
        for term in terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            _apply(term, labels)
        for weighted in terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            _apply(weighted.get("podAffinityTerm") or {}, labels)
