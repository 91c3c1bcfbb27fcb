"""spec.names / status.acceptedNames (ValidateCustomResourceDefinitionNames) and the spec-only
required names."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from ...apimachinery.validation import is_dns1035_label

Object = dict[str, Any]
_MIXED_CASE = "may have mixed case, but should otherwise match: "


def _s(names: Object, key: str) -> str:
    value = names.get(key)
    return value if isinstance(value, str) else ""


def validate_names(names: Object, path: Path) -> ErrorList:
    """ValidateCustomResourceDefinitionNames: formats, and kind != listKind."""
    errs: ErrorList = []
    for key in ("plural", "singular"):
        value = _s(names, key)
        if value and (msgs := is_dns1035_label(value)):
            errs.append(field.invalid(path.child(key), value, ",".join(msgs)))
    for key in ("kind", "listKind"):
        # kinds are CamelCase: only their lower-cased form has to be a DNS-1035 label
        value = _s(names, key)
        if value and (msgs := is_dns1035_label(value.lower())):
            errs.append(field.invalid(path.child(key), value, _MIXED_CASE + ",".join(msgs)))
    errs += _validate_labels(names.get("shortNames"), path.child("shortNames"))
    kind = _s(names, "kind")
    if kind and kind == _s(names, "listKind"):
        # a list kind equal to the kind would make decoding ambiguous
        errs.append(field.invalid(path.child("listKind"), kind, "kind and listKind may not be the same"))
    errs += _validate_labels(names.get("categories"), path.child("categories"))
    return errs


def _validate_labels(values: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, value in enumerate(values or []):
        value = value if isinstance(value, str) else ""
        if msgs := is_dns1035_label(value):
            errs.append(field.invalid(path.index(i), value, ",".join(msgs)))
    return errs


def validate_required_names(names: Object, path: Path) -> ErrorList:
    """Names the spec must carry (status.acceptedNames may leave them empty)."""
    return [
        field.required(path.child(key), "")
        for key in ("plural", "singular", "kind", "listKind")
        if not _s(names, key)
    ]
