"""ValidateStructural (pkg/apiserver/schema: validation.go, complete.go).

Checks that a schema is structural: every specified field has a type, logical junctors carry
value validations only, the int-or-string/embedded-resource/preserve-unknown-fields extensions
are used consistently, metadata at the root restricts nothing but name and generateName, and every
value validation has a structural counterpart. Errors are sorted by message as upstream does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from .regex import compile_go_regexp
from .structural import (
    Extensions,
    Generic,
    NestedValueValidation,
    Structural,
    ValueValidation,
    new_structural,
)

ROOT, ITEM, FIELD = 0, 1, 2

_INT_OR_STRING_ANY_OF = [
    NestedValueValidation(forbidden_generics=Generic(type="integer")),
    NestedValueValidation(forbidden_generics=Generic(type="string")),
]

_EMPTY_TYPE_DETAIL = {
    ROOT: "must not be empty at the root",
    ITEM: "must not be empty for specified array items",
    FIELD: "must not be empty for specified object fields",
}


@dataclass(frozen=True, slots=True)
class ValidationOptions:
    """``ValidationOptions``; CRDs use the all-false default."""

    allow_nested_additional_properties: bool = False
    allow_nested_x_validations: bool = False
    allow_validation_properties_with_additional_properties: bool = False


def validate_structural(schema: Structural | dict[str, Any] | None, path: Path | None,
                        opts: ValidationOptions = ValidationOptions()) -> ErrorList:
    """``ValidateStructural``: the structurality errors of a schema (Structural or JSONSchemaProps).

    A JSONSchemaProps that cannot be converted at all raises ValueError (see new_structural).
    """
    s = new_structural(schema) if isinstance(schema, dict) else schema
    errs = _invariants(s, ROOT, path, opts) + _completeness(s, path, opts)
    return sorted(errs, key=str)


def _c(path: Path | None, *names: str) -> Path:
    return field.child_of(path, names[0]).child(*names[1:]) if len(names) > 1 else field.child_of(path, names[0])


def _invariants(s: Structural | None, lvl: int, path: Path | None, opts: ValidationOptions) -> ErrorList:
    if s is None:
        return []
    errs: ErrorList = []
    if s.type == "array" and s.items is None:
        errs.append(field.required(_c(path, "items"), "must be specified"))
    errs += _invariants(s.items, ITEM, _c(path, "items"), opts)
    for key, prop in (s.properties or {}).items():
        errs += _invariants(prop, FIELD, _c(path, "properties").key(key), opts)
    if s.additional_properties is not None:
        if lvl == ROOT:
            errs.append(field.forbidden(_c(path, "additionalProperties"), "must not be used at the root"))
        if s.additional_properties.structural is not None:
            errs += _invariants(s.additional_properties.structural, FIELD, _c(path, "additionalProperties"), opts)
    errs += _extensions(s, path)
    skip_any_of = _is_int_or_string_any_of(s.value_validation)
    skip_first_all_of_any_of = _is_int_or_string_all_of(s.value_validation)
    errs += _value_validation(s.value_validation, skip_any_of, skip_first_all_of_any_of, lvl, path, opts)
    errs += _types(s, lvl, path)
    errs += _meta(s, lvl, path)
    if s.x_embedded_resource and not s.x_preserve_unknown_fields and not s.properties:
        errs.append(field.required(_c(path, "properties"), "must not be empty if x-kubernetes-embedded-resource "
                                                           "is true without x-kubernetes-preserve-unknown-fields"))
    return errs


def _extensions(x: Structural, path: Path | None) -> ErrorList:
    errs: ErrorList = []
    if x.x_int_or_string and x.x_preserve_unknown_fields:
        errs.append(field.invalid(_c(path, "x-kubernetes-preserve-unknown-fields"), True,
                                  "must be false if x-kubernetes-int-or-string is true"))
    if x.x_int_or_string and x.x_embedded_resource:
        errs.append(field.invalid(_c(path, "x-kubernetes-embedded-resource"), True,
                                  "must be false if x-kubernetes-int-or-string is true"))
    return errs


def _types(s: Structural, lvl: int, path: Path | None) -> ErrorList:
    errs: ErrorList = []
    if s.x_embedded_resource and s.type != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        if not s.type:
            errs.append(field.required(_c(path, "type"), detail))
        else:
            errs.append(field.invalid(_c(path, "type"), s.type, detail))
    elif not s.type and not s.x_int_or_string and not s.x_preserve_unknown_fields:
        errs.append(field.required(_c(path, "type"), _EMPTY_TYPE_DETAIL[lvl]))
    if s.x_embedded_resource and s.additional_properties is not None:
        errs.append(field.forbidden(_c(path, "additionalProperties"),
                                    "must not be used if x-kubernetes-embedded-resource is set"))
    if lvl == ROOT and s.type and s.type != "object":
        errs.append(field.invalid(_c(path, "type"), s.type, "must be object at the root"))
    return errs


def _meta(s: Structural, lvl: int, path: Path | None) -> ErrorList:
    errs: ErrorList = []
    check = lvl == ROOT or s.x_embedded_resource
    props = s.properties or {}
    for name in ("kind", "apiVersion"):
        if name in props and check and props[name].type != "string":
            errs.append(field.invalid(_c(path, "properties").key(name).child("type"), props[name].type,
                                      "must be string"))
    if "metadata" in props:
        errs += _metadata_invariants(props["metadata"], check, lvl, _c(path, "properties").key("metadata"))
    return errs


def _metadata_invariants(s: Structural, check: bool, lvl: int, path: Path) -> ErrorList:
    errs: ErrorList = []
    if check and s.type != "object":
        errs.append(field.invalid(path.child("type"), s.type, "must be object"))
    if lvl == ROOT:
        # only name and generateName may be restricted; compare a cleaned copy with the empty schema
        rest = s.clone()
        keys = set(rest.properties or ())
        if keys and keys <= {"name", "generateName"}:
            rest.properties = None
        rest.type, rest.default = "", None
        if rest.value_validation is None:
            rest.value_validation = ValueValidation()
        if rest != Structural(value_validation=ValueValidation()):
            errs.append(field.forbidden(path, "must not specify anything other than name and generateName, "
                                              "but metadata is implicitly specified"))
    return errs


def _is_int_or_string_any_of(vv: ValueValidation | None) -> bool:
    return vv is not None and vv.any_of is not None and vv.any_of == _INT_OR_STRING_ANY_OF


def _is_int_or_string_all_of(vv: ValueValidation | None) -> bool:
    return (vv is not None and bool(vv.all_of) and vv.all_of[0].value_validation.any_of is not None
            and vv.all_of[0].value_validation.any_of == _INT_OR_STRING_ANY_OF)


def _value_validation(v: ValueValidation | None, skip_any_of: bool, skip_first_all_of_any_of: bool,
                      lvl: int, path: Path | None, opts: ValidationOptions) -> ErrorList:
    if v is None:
        return []
    errs: ErrorList = []
    # x-kubernetes-validations stay forbidden under every junctor but allOf
    no_cel = dataclasses.replace(opts, allow_nested_x_validations=False)
    if not skip_any_of:
        for i, nested in enumerate(v.any_of or ()):
            errs += _nested(nested, False, False, lvl, _c(path, "anyOf").index(i), no_cel)
    for i, nested in enumerate(v.all_of or ()):
        skip = skip_first_all_of_any_of and i == 0
        errs += _nested(nested, skip, False, lvl, _c(path, "allOf").index(i), opts)
    for i, nested in enumerate(v.one_of or ()):
        errs += _nested(nested, False, False, lvl, _c(path, "oneOf").index(i), no_cel)
    errs += _nested(v.not_, False, False, lvl, _c(path, "not"), no_cel)
    if v.pattern:
        err = compile_go_regexp(v.pattern)[1]
        if err:
            errs.append(field.invalid(_c(path, "pattern"), v.pattern,
                                      f"must be a valid regular expression, but isn't: {err}"))
    return errs


_FORBIDDEN_GENERIC_CHECKS = (
    ("type", lambda g: bool(g.type), "must be empty to be structural"),
    ("default", lambda g: g.default is not None, "must be undefined to be structural"),
    ("title", lambda g: bool(g.title), "must be empty to be structural"),
    ("description", lambda g: bool(g.description), "must be empty to be structural"),
    ("nullable", lambda g: g.nullable, "must be false to be structural"),
)

_FORBIDDEN_EXTENSION_CHECKS = (
    ("x-kubernetes-preserve-unknown-fields", lambda x: x.x_preserve_unknown_fields, "must be false to be structural"),
    ("x-kubernetes-embedded-resource", lambda x: x.x_embedded_resource, "must be false to be structural"),
    ("x-kubernetes-int-or-string", lambda x: x.x_int_or_string, "must be false to be structural"),
    ("x-kubernetes-list-map-keys", lambda x: bool(x.x_list_map_keys), "must be empty to be structural"),
    ("x-kubernetes-list-type", lambda x: x.x_list_type is not None, "must be undefined to be structural"),
    ("x-kubernetes-map-type", lambda x: x.x_map_type is not None, "must be undefined to be structural"),
)


def _nested(v: NestedValueValidation | None, skip_any_of: bool, skip_all_of_any_of: bool, lvl: int,
            path: Path, opts: ValidationOptions) -> ErrorList:
    if v is None:
        return []
    errs = _value_validation(v.value_validation, skip_any_of, skip_all_of_any_of, lvl, path, opts)
    errs += _nested(v.items, False, False, lvl, path.child("items"), opts)
    for key, prop in (v.properties or {}).items():
        errs += _nested(prop, False, False, FIELD, path.child("properties").key(key), opts)
    generic: Generic = v.forbidden_generics
    if generic.type:
        errs.append(field.forbidden(path.child("type"), "must be empty to be structural"))
    if v.additional_properties is not None and not opts.allow_nested_additional_properties:
        errs.append(field.forbidden(path.child("additionalProperties"), "must be undefined to be structural"))
    else:
        errs += _nested(v.additional_properties, False, False, lvl, path.child("additionalProperties"), opts)
    for name, test, detail in _FORBIDDEN_GENERIC_CHECKS[1:]:
        if test(generic):
            errs.append(field.forbidden(path.child(name), detail))
    extensions: Extensions = v.forbidden_extensions
    for name, test, detail in _FORBIDDEN_EXTENSION_CHECKS:
        if test(extensions):
            errs.append(field.forbidden(path.child(name), detail))
    if v.x_validations and not opts.allow_nested_x_validations:
        errs.append(field.forbidden(path.child("x-kubernetes-validations"), "must be empty to be structural"))
    if v.properties and "metadata" in v.properties:
        errs.append(field.forbidden(path.child("properties").key("metadata"),
                                    "must not be specified in a nested context"))
    return errs


# --- completeness (complete.go) -------------------------------------------------


def _completeness(s: Structural | None, path: Path | None, opts: ValidationOptions) -> ErrorList:
    if s is None:
        return []
    return _vv_completeness(s.value_validation, s, path, path, opts)


def _missing(s_path: Path | None, v_path: Path | None) -> ErrorList:
    return [field.required(s_path, f"because it is defined in {field.path_str(v_path)}")]


def _vv_completeness(v: ValueValidation | None, s: Structural | None, s_path: Path | None,
                     v_path: Path | None, opts: ValidationOptions) -> ErrorList:
    if v is None:
        return []
    if s is None:
        return _missing(s_path, v_path)
    errs = _nested_completeness(v.not_, s, s_path, _c(v_path, "not"), opts)
    for name, junctor in (("allOf", v.all_of), ("anyOf", v.any_of), ("oneOf", v.one_of)):
        for i, nested in enumerate(junctor or ()):
            errs += _nested_completeness(nested, s, s_path, _c(v_path, name).index(i), opts)
    return errs


def _nested_completeness(v: NestedValueValidation | None, s: Structural | None, s_path: Path | None,
                         v_path: Path | None, opts: ValidationOptions) -> ErrorList:
    if v is None:
        return []
    if s is None:
        return _missing(s_path, v_path)
    errs = _vv_completeness(v.value_validation, s, s_path, v_path, opts)
    errs += _nested_completeness(v.items, s.items, _c(s_path, "items"), _c(v_path, "items"), opts)
    s_additional = s.additional_properties.structural if s.additional_properties is not None else None
    for key, v_prop in (v.properties or {}).items():
        v_key = _c(v_path, "properties").key(key)
        s_prop = (s.properties or {}).get(key)
        if s_prop is not None:
            errs += _nested_completeness(v_prop, s_prop, _c(s_path, "properties").key(key), v_key, opts)
        elif s_additional is None or not opts.allow_validation_properties_with_additional_properties:
            errs += _missing(_c(s_path, "properties").key(key), v_key)
        else:
            errs += _nested_completeness(v_prop, s_additional, _c(s_path, "additionalProperties"), v_key, opts)
    if v.additional_properties is not None and opts.allow_nested_additional_properties:
        errs += _nested_completeness(v.additional_properties, s_additional, _c(s_path, "additionalProperties"),
                                     _c(v_path, "additionalProperties"), opts)
    return errs
