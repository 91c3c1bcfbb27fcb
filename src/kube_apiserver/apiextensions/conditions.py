"""CustomResourceDefinition conditions and the helpers every part of the apiextensions server reads them
with (apiextensions-apiserver pkg/apihelpers)."""

from __future__ import annotations

from typing import Any

from ..apimachinery.meta import now_rfc3339

Object = dict[str, Any]
NAMES_ACCEPTED, ESTABLISHED, TERMINATING = "NamesAccepted", "Established", "Terminating"
NON_STRUCTURAL = "NonStructuralSchema"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def find(crd: Object, kind: str) -> Object | None:
    for condition in (crd.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def is_true(crd: Object, kind: str) -> bool:
    condition = find(crd, kind)
    return condition is not None and condition.get("status") == "True"


def set_condition(crd: Object, kind: str, status: str, reason: str, message: str) -> None:
    """SetCRDCondition: the transition time moves only when the status changes."""
    conditions = crd.setdefault("status", {}).setdefault("conditions", [])
    new = {"type": kind, "status": status, "lastTransitionTime": now_rfc3339(), "reason": reason,
           "message": message}
    for i, condition in enumerate(conditions):
        if condition.get("type") == kind:
            if condition.get("status") == status:
                new["lastTransitionTime"] = condition.get("lastTransitionTime", new["lastTransitionTime"])
            conditions[i] = new
            return
    conditions.append(new)


def remove_condition(crd: Object, kind: str) -> None:
    status = crd.get("status") or {}
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != kind]


def served_versions(crd: Object) -> list[str]:
    return [v["name"] for v in crd["spec"].get("versions") or [] if v.get("served")]


def storage_version(crd: Object) -> str:
    return next((v["name"] for v in crd["spec"].get("versions") or [] if v.get("storage")), "")


def version_of(crd: Object, name: str) -> Object | None:
    return next((v for v in crd["spec"].get("versions") or [] if v.get("name") == name), None)


def is_terminating(crd: Object) -> bool:
    return bool(crd["metadata"].get("deletionTimestamp")) or is_true(crd, TERMINATING)
