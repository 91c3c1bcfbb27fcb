"""metav1.Condition lists, validated as k8s.io/apimachinery/pkg/apis/meta/v1/validation.ValidateConditions."""

from __future__ import annotations

import re
from typing import Any

from ...apimachinery import field, validation

CONDITION_STATUSES = ("False", "True", "Unknown")
MAX_REASON_LEN = 1 * 1024
MAX_MESSAGE_LEN = 32 * 1024
REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
REASON_MSG = ("a condition reason must start with alphabetic character, optionally followed by a string of "
              "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'")
_reason = re.compile(REASON_FMT).fullmatch


def validate_conditions(conditions: list[dict[str, Any]] | None, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions or []):
        kind = condition.get("type") or ""
        if kind in seen:
            errs.append(field.duplicate(path.index(i).child("type"), kind))
        seen.add(kind)
        errs += validate_condition(condition, path.index(i))
    return errs


def validate_condition(condition: dict[str, Any], path: field.Path) -> field.ErrorList:
    errs = validation.validate_label_name(condition.get("type") or "", path.child("type"))
    status = condition.get("status") or ""
    if status not in CONDITION_STATUSES:
        errs.append(field.not_supported(path.child("status"), status, CONDITION_STATUSES))
    generation = condition.get("observedGeneration") or 0
    if generation < 0:
        errs.append(field.invalid(path.child("observedGeneration"), generation,
                                  "must be greater than or equal to zero"))
    if not condition.get("lastTransitionTime"):
        errs.append(field.required(path.child("lastTransitionTime"), ""))
    errs += _validate_reason(condition.get("reason") or "", path.child("reason"))
    if len((condition.get("message") or "").encode()) > MAX_MESSAGE_LEN:
        errs.append(field.too_long(path.child("message"), "", MAX_MESSAGE_LEN))
    return errs


def _validate_reason(reason: str, path: field.Path) -> field.ErrorList:
    if not reason:
        return [field.required(path, "")]
    errs: field.ErrorList = []
    if not _reason(reason):
        example = validation.regex_error(REASON_MSG, REASON_FMT, "my_name", "MY_NAME", "MyName",
                                         "ReasonA,ReasonB", "ReasonA:ReasonB")
        errs.append(field.invalid(path, reason, example))
    if len(reason.encode()) > MAX_REASON_LEN:
        errs.append(field.too_long(path, "", MAX_REASON_LEN))
    return errs
