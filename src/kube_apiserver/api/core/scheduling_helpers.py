"""Whether a pod may go on a node as far as its manifest says (k8s.io/component-helpers/scheduling/corev1
and the taint helpers of k8s.io/api/core/v1): node selector terms, required node affinity, tolerations
against taints. The scheduler, the daemonset controller and node lifecycle all ask these questions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Object = dict[str, Any]


def _int(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def requirement_matches(requirement: Object, labels: dict[str, str]) -> bool:
    """One NodeSelectorRequirement against a node's labels, as labels.Selector evaluates it: NotIn and
    DoesNotExist hold for an absent label, Gt and Lt need an integer label and an integer value."""
    key, op = requirement.get("key", ""), requirement.get("operator", "")
    values = requirement.get("values") or []
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        have, want = _int(labels[key]), _int(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _field_matches(requirement: Object, node: Object) -> bool:
    """matchFields supports only metadata.name with In or NotIn and one value."""
    values = requirement.get("values") or []
    if requirement.get("key") != "metadata.name" or len(values) != 1:
        return False
    name = node.get("metadata", {}).get("name", "")
    if requirement.get("operator") == "In":
        return name == values[0]
    if requirement.get("operator") == "NotIn":
        return name != values[0]
    return False


def term_matches(term: Object, node: Object) -> bool:
    """A NodeSelectorTerm: all its expressions and fields; an empty term matches nothing."""
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node.get("metadata", {}).get("labels") or {}
    return all(requirement_matches(r, labels) for r in expressions) and all(
        _field_matches(r, node) for r in fields
    )


def node_selector_matches(selector: Object, node: Object) -> bool:
    """A NodeSelector: any of its terms."""
    return any(term_matches(term, node) for term in selector.get("nodeSelectorTerms") or [])


def required_node_affinity_matches(pod: Object, node: Object) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector and the required node affinity."""
    spec = pod.get("spec") or {}
    labels = node.get("metadata", {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return required is None or node_selector_matches(required, node)


def tolerates(toleration: Object, taint: Object) -> bool:
    """Toleration.ToleratesTaint: same effect (or any), same key (or any with Exists), same value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def tolerations_tolerate(tolerations: Iterable[Object], taint: Object) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def untolerated_taint(
    taints: Iterable[Object],
    tolerations: list[Object],
    effects: tuple[str, ...] = ("NoSchedule", "NoExecute"),
) -> Object | None:
    """FindMatchingUntoleratedTaint: the first taint with one of `effects` no toleration tolerates."""
    for taint in taints:
        if taint.get("effect") in effects and not tolerations_tolerate(tolerations, taint):
            return taint
    return None
