"""The x-kubernetes-* extensions of one schema node: preserve-unknown-fields, map and list types,
list map keys, and the static shape of x-kubernetes-validations rules."""

from __future__ import annotations

import re
from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from .fieldpath import path_valid
from .options import Options
from .structural import structural_error

Object = dict[str, Any]
SUPPORTED_RULE_REASONS = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
)
_NEWLINES = re.compile(r"[\n\r]+")
_SET_ITEM = "must be atomic as item of a list with x-kubernetes-list-type=set"


def validate_extensions(s: Object, path: Path, opts: Options) -> ErrorList:
    errs: ErrorList = []
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            field.invalid(
                path.child("x-kubernetes-preserve-unknown-fields"), False, "must be true or undefined"
            )
        )
    errs += _validate_map_type(s, path)
    errs += _validate_list_type(s, path, opts)
    errs += _validate_map_list(s, path)
    if opts.require_map_list_keys_map_set_validation:
        errs += validate_map_list_keys_map_set(s, path)
    return errs


def _type_must_be(s: Object, path: Path, want: str, extension: str) -> ErrorList:
    typ = s.get("type") or ""
    detail = f"must be {want} if {extension} is specified"
    if not typ:
        return [field.required(path.child("type"), detail)]
    return [field.invalid(path.child("type"), typ, detail)]


def _validate_map_type(s: Object, path: Path) -> ErrorList:
    map_type = s.get("x-kubernetes-map-type")
    if map_type is None:
        return []
    errs: ErrorList = []
    if s.get("type") != "object":
        errs += _type_must_be(s, path, "object", "x-kubernetes-map-type")
    if map_type not in ("atomic", "granular"):
        errs.append(
            field.not_supported(path.child("x-kubernetes-map-type"), map_type, ["atomic", "granular"])
        )
    return errs


def _validate_list_type(s: Object, path: Path, opts: Options) -> ErrorList:
    list_type = s.get("x-kubernetes-list-type")
    errs: ErrorList = []
    items = s.get("items")
    if list_type is not None and s.get("type") != "array":
        errs += _type_must_be(s, path, "array", "x-kubernetes-list-type")
    elif opts.require_atomic_set_type and list_type == "set" and isinstance(items, dict):
        if items.get("type") == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            errs.append(
                field.invalid(
                    path.child("items").child("x-kubernetes-list-type"),
                    items.get("x-kubernetes-list-type"),
                    _SET_ITEM,
                )
            )
        elif items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            # upstream reports the item's list type here, whatever its map type is
            errs.append(
                field.invalid(
                    path.child("items").child("x-kubernetes-map-type"),
                    items.get("x-kubernetes-list-type"),
                    _SET_ITEM,
                )
            )
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(
            field.not_supported(path.child("x-kubernetes-list-type"), list_type, ["atomic", "set", "map"])
        )
    return errs


def _validate_map_list(s: Object, path: Path) -> ErrorList:
    list_type = s.get("x-kubernetes-list-type")
    keys = s.get("x-kubernetes-list-map-keys") or []
    errs: ErrorList = []
    if keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errs.append(field.required(path.child("x-kubernetes-list-type"), detail))
        elif list_type != "map":
            errs.append(field.invalid(path.child("x-kubernetes-list-type"), list_type, detail))
    if list_type != "map":
        return errs
    if not keys:
        errs.append(
            field.required(
                path.child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"
            )
        )
    items = s.get("items")
    if items is None:
        errs.append(
            field.required(path.child("items"), "must have a schema if x-kubernetes-list-type is map")
        )
        return errs
    if not isinstance(items, dict):
        from .gostruct import items_struct

        errs.append(
            field.invalid(
                path.child("items"),
                items_struct(items),
                "must only have a single schema if x-kubernetes-list-type is map",
            )
        )
        return errs
    if items.get("type") != "object":
        errs.append(
            field.invalid(
                path.child("items").child("type"),
                items.get("type") or "",
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
        return errs
    return errs + _validate_map_keys(keys, items, path)


def _validate_map_keys(keys: list[Any], items: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    properties = items.get("properties") or {}
    seen: set[Any] = set()
    for key in keys:
        prop = properties.get(key)
        if isinstance(prop, dict):
            if prop.get("type") in ("array", "object"):
                # upstream shows the item's type ("object") as the bad value
                errs.append(
                    field.invalid(
                        path.child("items", "properties").key(key).child("type"),
                        "object",
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    )
                )
        else:
            errs.append(
                field.invalid(
                    path.child("x-kubernetes-list-map-keys"),
                    keys,
                    "entries must all be names of item properties",
                )
            )
        if key in seen:
            errs.append(
                field.invalid(
                    path.child("x-kubernetes-list-map-keys"), keys, "must not contain duplicate entries"
                )
            )
        seen.add(key)
    return errs


def validate_map_list_keys_map_set(s: Object, path: Path) -> ErrorList:
    """validateMapListKeysMapSet: map/set items are never null; map keys are required or defaulted."""
    items = s.get("items")
    list_type = s.get("x-kubernetes-list-type")
    if not isinstance(items, dict) or list_type not in ("set", "map"):
        return []
    errs: ErrorList = []
    if items.get("nullable"):
        errs.append(
            field.forbidden(
                path.child("items").child("nullable"),
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    if list_type != "map":
        return errs
    required = set(items.get("required") or [])
    properties = items.get("properties") or {}
    for key in s.get("x-kubernetes-list-map-keys") or []:
        prop = properties.get(key)
        if not isinstance(prop, dict):
            continue  # reported as "entries must all be names of item properties"
        key_path = path.child("items").child("properties").key(key)
        if key not in required and prop.get("default") is None:
            errs.append(
                field.required(
                    key_path.child("default"),
                    "this property is in x-kubernetes-list-map-keys, "
                    "so it must have a default or be a required property",
                )
            )
        if prop.get("nullable"):
            errs.append(
                field.forbidden(
                    key_path.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            )
    return errs


def _s(rule: Object, key: str) -> str:
    value = rule.get(key)
    return value if isinstance(value, str) else ""


def validate_rule_shapes(s: Object, path: Path) -> ErrorList:
    """The checks on x-kubernetes-validations that need no CEL compiler."""
    errs: ErrorList = []
    structural_ok: bool | None = None
    for i, rule in enumerate(s.get("x-kubernetes-validations") or []):
        rule = rule if isinstance(rule, dict) else {}
        rule_path = path.child("x-kubernetes-validations").index(i)
        errs += _rule_text_errors(rule, rule_path)
        reason = rule.get("reason")
        if reason is not None and reason not in SUPPORTED_RULE_REASONS:
            errs.append(field.not_supported(rule_path.child("reason"), reason, SUPPORTED_RULE_REASONS))
        field_path = _s(rule, "fieldPath")
        if field_path and not field_path.strip():
            errs.append(
                field.invalid(rule_path.child("fieldPath"), field_path, "must be non-empty if specified")
            )
        if _NEWLINES.search(field_path):
            errs.append(
                field.invalid(rule_path.child("fieldPath"), field_path, "must not contain line breaks")
            )
        if field_path:
            if structural_ok is None:
                structural_ok = structural_error(s) is None
            if not path_valid(s, field_path, structural_ok):
                errs.append(field.invalid(rule_path.child("fieldPath"), field_path, "must be a valid path"))
    return errs


def _rule_text_errors(rule: Object, path: Path) -> ErrorList:
    text, message, message_expr = _s(rule, "rule"), _s(rule, "message"), _s(rule, "messageExpression")
    errs: ErrorList = []
    if not text.strip():
        errs.append(field.required(path.child("rule"), "rule is not specified"))
    elif message and not message.strip():
        errs.append(field.invalid(path.child("message"), message, "must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errs.append(field.invalid(path.child("message"), message, "must not contain line breaks"))
    elif _NEWLINES.search(text.strip()) and not message.strip():
        errs.append(
            field.required(path.child("message"), "message must be specified if rule contains line breaks")
        )
    if message_expr and not message_expr.strip():
        errs.append(
            field.required(
                path.child("messageExpression"), "messageExpression must be non-empty if specified"
            )
        )
    return errs
