"""Names and small helpers flowschemas and prioritylevelconfigurations share (k8s.io/api/flowcontrol/v1
constants, pkg/apis/flowcontrol/validation)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field

Object = dict[str, Any]
GROUP = "flowcontrol.apiserver.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
WILDCARD = "*"  # APIGroupAll, ResourceAll, VerbAll, NonResourceAll, NameAll, NamespaceEvery
EXEMPT = "exempt"  # the mandatory FlowSchema and PriorityLevelConfiguration
CATCH_ALL = "catch-all"
AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"
# flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey: only v1beta3 may carry it.
PRESERVE_ZERO_ANNOTATION = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"
CONDITION_DANGLING = "Dangling"
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_bool(value: Any) -> bool | None:
    """strconv.ParseBool: None when the text is not a boolean."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def has_wildcard(values: list[str]) -> bool:
    return WILDCARD in values


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def ordered(obj: Object, keys: tuple[str, ...]) -> Object:
    """The fields in Go declaration order, empty (omitempty) ones left out, as Kubernetes serves them."""
    return {key: obj[key] for key in keys if key in obj and obj[key] not in (None, [], {})}


def validate_status(status: Object, path: field.Path) -> field.ErrorList:
    """ValidateFlowSchemaStatus / ValidatePriorityLevelConfigurationStatus: condition types are
    present and unique."""
    errs: field.ErrorList = []
    seen: set[str] = set()
    for i, condition in enumerate(as_list(status.get("conditions"))):
        kind = as_str(as_dict(condition).get("type"))
        if kind in seen:
            errs.append(field.duplicate(path.child("conditions").index(i).child("type"), kind))
        seen.add(kind)
        if not kind:
            errs.append(field.required(path.child("conditions").index(i).child("type"), "must not be empty"))
    return errs
