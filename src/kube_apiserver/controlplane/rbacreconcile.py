"""Reconciling a stored role or binding with its bootstrap definition (k8s component-helpers/auth/rbac/
reconciliation reconcile_role.go, reconcile_rolebindings.go).

What is missing is added (labels, annotations, rules, aggregation selectors, subjects); what users added
is kept, since the post-start hook never removes extra permissions or subjects. A binding whose roleRef
differs is recreated. An object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` is
protected: it is reported and left alone."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..api.rbac.covers import covers
from .bootstrappolicy import AUTOUPDATE_ANNOTATION

Object = dict[str, Any]
NONE, CREATE, UPDATE, RECREATE = "none", "create", "update", "recreate"


@dataclass
class Result:
    obj: Object
    operation: str = NONE
    protected: bool = False
    missing: list[Any] = field(default_factory=list)


def _writable_copy(existing: Object) -> Object:
    """What reconciling may change of the stored object: its top-level fields and metadata's are replaced, never
    changed in place, so copying those two levels is enough (a deep copy of every role was most of a restart's
    reconcile time)."""
    return {**existing, "metadata": dict(existing.get("metadata") or {})}


def _protected(existing: Object) -> bool:
    return ((existing.get("metadata") or {}).get("annotations") or {}).get(AUTOUPDATE_ANNOTATION) == "false"


def _merge_metadata(result: Result, existing: Object, expected: Object) -> None:
    """merge(expected, existing): the existing values win, the expected ones fill what is missing."""
    meta, old, want = result.obj.setdefault("metadata", {}), existing.get("metadata") or {}, expected["metadata"]
    for key in ("annotations", "labels"):
        if not want.get(key) and not old.get(key):
            continue
        merged = {**(want.get(key) or {}), **(old.get(key) or {})}
        meta[key] = merged
        if merged != (old.get(key) or {}):
            result.operation = UPDATE


def _selectors(role: Object) -> list[Object] | None:
    rule = role.get("aggregationRule")
    return None if rule is None else list(rule.get("clusterRoleSelectors") or [])


def _missing_selectors(existing: list[Object] | None, expected: list[Object] | None) -> list[Object]:
    """aggregationRuleCovers(existing, expected): the expected selectors the existing rule lacks."""
    if expected is None:
        return []
    return [s for s in expected if s not in (existing or [])]


def reconcile_role(existing: Object, expected: Object) -> Result:
    """computeReconciledRole without removing extra permissions."""
    result = Result(_writable_copy(existing), protected=_protected(existing))
    _merge_metadata(result, existing, expected)
    _, result.missing = covers(list(existing.get("rules") or []), list(expected.get("rules") or []))
    if result.missing:
        result.obj["rules"] = [*(existing.get("rules") or []), *result.missing]
        result.operation = UPDATE
    have, want = _selectors(existing), _selectors(expected)
    if want is None and have is not None:
        # not expected to be an aggregated role at all
        result.obj.pop("aggregationRule", None)
        result.operation = UPDATE
    elif missing := _missing_selectors(have, want):
        result.obj["aggregationRule"] = {"clusterRoleSelectors": [*(have or []), *missing]}
        result.operation = UPDATE
    return result


def _subject_key(subject: Object) -> tuple[str, str, str, str]:
    return (subject.get("kind", ""), subject.get("apiGroup", ""), subject.get("name", ""),
            subject.get("namespace", ""))


def _role_ref_key(binding: Object) -> tuple[str, str, str]:
    ref = binding.get("roleRef") or {}
    return ref.get("apiGroup", ""), ref.get("kind", ""), ref.get("name", "")


def reconcile_binding(existing: Object, expected: Object) -> Result:
    """computeReconciledRoleBinding without removing extra subjects."""
    protected = _protected(existing)
    if _role_ref_key(existing) != _role_ref_key(expected):
        # roleRef is immutable: the binding is reset completely
        return Result(copy.deepcopy(expected), RECREATE, protected)
    result = Result(_writable_copy(existing), protected=protected)
    _merge_metadata(result, existing, expected)
    have = {_subject_key(s) for s in existing.get("subjects") or []}
    result.missing = [s for s in expected.get("subjects") or [] if _subject_key(s) not in have]
    if result.missing:
        result.obj["subjects"] = [*(existing.get("subjects") or []), *result.missing]
        result.operation = UPDATE
    return result
