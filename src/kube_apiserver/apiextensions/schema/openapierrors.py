"""kube-openapi validation errors and their mapping to field errors (ValidateCustomResource's
kubeOpenAPIResultToFieldErrors)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import FieldError, Path, go_json

# kube-openapi error codes, as kubeOpenAPIResultToFieldErrors distinguishes them
INVALID_TYPE, REQUIRED, TOO_LONG, ENUM, MAX_ITEMS, TOO_MANY_PROPERTIES, OTHER, COMPOSITE = range(8)

Err = tuple[int, str, Any, Any, str]  # code, name, value, valid (limit or enum values), message


def _enum_values(values: list[Any]) -> list[str]:
    return [x if isinstance(x, str) else go_json(x) for x in values]


def to_field_error(path: Path | None, err: Err) -> FieldError:
    """One kube-openapi error as ValidateCustomResource reports it."""
    code, name, value, valid, message = err
    if code == COMPOSITE:
        return field.invalid(path, "", message)
    err_path = field.child_of(path, name.removeprefix(".")) if name and name != "." else path
    if code == REQUIRED:
        return field.required(err_path, "")
    if code == ENUM:
        # Go prints a nil bad value as the string "null"
        return field.not_supported(err_path, "null" if value is None else value, _enum_values(valid))
    if code == TOO_LONG:
        return field.too_long(err_path, "", valid)
    if code in (MAX_ITEMS, TOO_MANY_PROPERTIES):
        return field.too_many(err_path, value, valid)
    shown = "" if value is None else value
    if code == INVALID_TYPE:
        return field.type_invalid(err_path, shown, message)
    return field.invalid(err_path, shown, message)


def unique(errs: list[Err]) -> list[Err]:
    """Result.AddErrors keeps the first of equal messages."""
    seen: set[str] = set()
    out = []
    for e in errs:
        if e[4] not in seen:
            seen.add(e[4])
            out.append(e)
    return out
