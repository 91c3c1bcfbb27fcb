"""Subresources (status, scale paths), additionalPrinterColumns and selectableFields."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from .fieldpath import FieldPathError, valid_field_path

Object = dict[str, Any]

PRINTER_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
PRINTER_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
MAX_SELECTABLE_FIELDS = 8
_SELECTABLE_TYPES = ("string", "boolean", "integer")


def _s(obj: Object, key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def validate_simple_json_path(s: str, path: Path) -> ErrorList:
    """validateSimpleJSONPath: a non-empty path in dot notation starting with '.'."""
    if not s:
        return [field.invalid(path, s, "must not be empty")]
    if s[0] != ".":
        return [field.invalid(path, s, "must be a simple json path starting with .")]
    return []


def validate_subresources(subresources: Object | None, path: Path) -> ErrorList:
    """ValidateCustomResourceDefinitionSubresources."""
    if not isinstance(subresources, dict) or not isinstance(subresources.get("scale"), dict):
        return []
    scale = subresources["scale"]
    errs = _scale_path(
        _s(scale, "specReplicasPath"),
        ".spec.",
        "should be a json path under .spec",
        path.child("scale.specReplicasPath"),
    )
    errs += _scale_path(
        _s(scale, "statusReplicasPath"),
        ".status.",
        "should be a json path under .status",
        path.child("scale.statusReplicasPath"),
    )
    selector = scale.get("labelSelectorPath")
    if isinstance(selector, str) and selector:
        selector_path = path.child("scale.labelSelectorPath")
        if errs_ := validate_simple_json_path(selector, selector_path):
            errs += errs_
        elif not selector.startswith((".spec.", ".status.")):
            errs.append(
                field.invalid(selector_path, selector, "should be a json path under either .spec or .status")
            )
    return errs


def _scale_path(value: str, prefix: str, detail: str, path: Path) -> ErrorList:
    if not value:
        return [field.required(path, "")]
    if errs := validate_simple_json_path(value, path):
        return errs
    return [] if value.startswith(prefix) else [field.invalid(path, value, detail)]


def validate_column(col: Object, path: Path) -> ErrorList:
    """ValidateCustomResourceColumnDefinition (the internal field is JSONPath, hence the path)."""
    errs: ErrorList = []
    if not _s(col, "name"):
        errs.append(field.required(path.child("name"), ""))
    types_detail = "must be one of " + ",".join(PRINTER_COLUMN_TYPES)
    col_type = _s(col, "type")
    if not col_type:
        errs.append(field.required(path.child("type"), types_detail))
    elif col_type not in PRINTER_COLUMN_TYPES:
        errs.append(field.invalid(path.child("type"), col_type, types_detail))
    col_format = _s(col, "format")
    if col_format and col_format not in PRINTER_COLUMN_FORMATS:
        errs.append(
            field.invalid(
                path.child("format"), col_format, "must be one of " + ",".join(PRINTER_COLUMN_FORMATS)
            )
        )
    json_path = _s(col, "jsonPath")
    if not json_path:
        errs.append(field.required(path.child("JSONPath"), ""))
    else:
        errs += validate_simple_json_path(json_path, path.child("JSONPath"))
    return errs


def validate_columns(columns: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, col in enumerate(columns or []):
        errs += validate_column(col if isinstance(col, dict) else {}, path.index(i))
    return errs


def validate_selectable_fields(fields: list[Any], schema: Object | None, path: Path) -> ErrorList:
    """ValidateCustomResourceSelectableFields."""
    errs: ErrorList = []
    unique: set[str] = set()
    for i, selectable in enumerate(fields):
        json_path_field = path.index(i).child("jsonPath")
        json_path = _s(selectable, "jsonPath") if isinstance(selectable, dict) else ""
        if not json_path:
            errs.append(field.required(json_path_field, ""))
            continue
        try:
            found = valid_field_path(json_path, schema, allow_array_notation=False)
        except FieldPathError as err:
            errs.append(field.invalid(json_path_field, json_path, f"is an invalid path: {err}"))
            continue
        if found.root == "metadata":
            errs.append(field.invalid(json_path_field, json_path, "must not point to fields in metadata"))
        if not isinstance(found.schema, dict) or found.schema.get("type") not in _SELECTABLE_TYPES:
            errs.append(
                field.invalid(
                    json_path_field,
                    json_path,
                    "must point to a field of type string, boolean "
                    "or integer. Enum string fields and strings with formats are allowed.",
                )
            )
        if found.path in unique:
            errs.append(field.duplicate(json_path_field, json_path))
        else:
            unique.add(found.path)
    if len(unique) > MAX_SELECTABLE_FIELDS:
        errs.append(field.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return errs
