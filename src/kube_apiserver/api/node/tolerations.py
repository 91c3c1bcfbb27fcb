"""RuntimeClass scheduling: nodeSelector labels and tolerations (corevalidation.ValidateTolerations
plus the uniqueness rule of pkg/apis/node/validation)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, OrderedStruct, Path

OPERATORS = ("Equal", "Exists")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
EMPTY_KEY_MESSAGE = "operator must be Exists when `key` is empty, which means \"match all values and all keys\""


def _operator_errors(toleration: dict[str, Any], path: Path) -> ErrorList:
    operator, value = toleration.get("operator") or "", toleration.get("value") or ""
    if operator in ("Equal", ""):
        msgs = validation.is_valid_label_value(value)
        return [field.invalid(path.child("operator"), value, ";".join(msgs))] if msgs else []
    if operator == "Exists":
        if value:
            return [field.invalid(path.child("operator"), value, "value must be empty when `operator` is 'Exists'")]
        return []
    return [field.not_supported(path.child("operator"), operator, OPERATORS)]


def validate_toleration(toleration: dict[str, Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    key, effect = toleration.get("key") or "", toleration.get("effect") or ""
    if key:
        errs += validation.validate_label_name(key, path.child("key"))
    if not key and toleration.get("operator") != "Exists":
        errs.append(field.invalid(path.child("operator"), toleration.get("operator") or "", EMPTY_KEY_MESSAGE))
    if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        errs.append(field.invalid(path.child("effect"), effect,
                                  "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    errs += _operator_errors(toleration, path)
    if effect and effect not in EFFECTS:
        errs.append(field.not_supported(path.child("effect"), effect, EFFECTS))
    return errs


def _as_struct(toleration: dict[str, Any]) -> OrderedStruct:
    """core.Toleration as Go prints it in an error (JSON, empty fields omitted)."""
    keys = ("key", "operator", "value", "effect", "tolerationSeconds")
    return OrderedStruct(tuple((k, toleration[k]) for k in keys if toleration.get(k) not in (None, "")))


def validate_tolerations(tolerations: list[Any], path: Path) -> ErrorList:
    items = [t if isinstance(t, dict) else {} for t in tolerations]
    errs = [e for i, t in enumerate(items) for e in validate_toleration(t, path.index(i))]
    seen: set[tuple[str, ...]] = set()
    for i, toleration in enumerate(items):
        list_key = tuple(str(toleration.get(k) or "") for k in ("key", "operator", "value", "effect"))
        if list_key in seen:
            errs.append(field.duplicate(path.index(i), _as_struct(toleration)))
        seen.add(list_key)
    return errs


def validate_scheduling(scheduling: dict[str, Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    if scheduling.get("nodeSelector") is not None:
        errs += validation.validate_labels(scheduling["nodeSelector"], path.child("nodeSelector"))
    return errs + validate_tolerations(list(scheduling.get("tolerations") or []), path.child("tolerations"))
