"""OpenAPI v3 value validation of custom resources (kube-openapi pkg/validation/validate as
apiextensions' NewSchemaValidator configures it, and ValidateCustomResource's error mapping).

The schema is compiled once into :class:`_Node` objects; ``validate`` walks the object once.
The kube-openapi semantics kept on purpose:

* validators apply by the *data's* kind (a string is length-checked even when the schema says
  integer), in the order type, allOf/anyOf/oneOf/not, string, format, number, array, enum, object;
* anyOf/oneOf report the failing branch with the highest "match count" (kube-openapi's
  ``Result.MatchCount``), which every node therefore returns;
* errors repeat once (``Result.AddErrors`` drops equal messages);
* messages name the value as ``spec.replicas in body``; the field path is that name as one element.
"""

from __future__ import annotations

from typing import Any

from ...apimachinery.field import ErrorList, Path, go_quote
from . import govalues as gv
from .formats import DEFAULT_COMPATIBILITY_VERSION, checker, effective_format
from .junctors import all_of, any_of, branch, one_of
from .openapierrors import (
    COMPOSITE,
    ENUM,
    INVALID_TYPE,
    MAX_ITEMS,
    OTHER,
    REQUIRED,
    TOO_LONG,
    TOO_MANY_PROPERTIES,
    Err,
    to_field_error,
    unique,
)
from .ratcheting import is_ratcheted, unchanged_names
from .regex import compile_go_regexp, go_regexp_test

_KIND = {bool: "boolean", str: "string", int: "integer", float: "number", list: "array", dict: "object"}
# Python types that always satisfy a single schema type (ints are range-checked separately)
_FAST_TYPES = {"string": (str,), "boolean": (bool,), "object": (dict,), "array": (list,), "number": (float,)}


def _kind(v: Any) -> str:
    kind = _KIND.get(type(v))
    if kind == "integer" and not gv.is_int(v):
        return "number"  # beyond int64, Go decodes a float64
    return kind or "object"


def _type_error(name: str, type_name: str, value: Any) -> Err:
    """errors.InvalidType: the data shown with %q when it is a string."""
    if isinstance(value, str):
        msg = f"{name} in body must be of type {type_name}: {go_quote(value)}"
    else:
        msg = f"{name} in body must be of type {type_name}"
    return (INVALID_TYPE, name, value, None, msg)


def _child(name: str, key: str) -> str:
    return f"{name}.{key}" if name else key


class _Node:
    """One compiled schema node; ``check`` appends errors and returns kube-openapi's MatchCount."""

    __slots__ = (
        "types", "types_text", "nullable", "fmt", "fmt_check", "enum", "max_length", "min_length",
        "pattern", "pattern_error", "maximum", "exclusive_maximum", "minimum", "exclusive_minimum",
        "multiple_of", "items", "min_items", "max_items", "unique_items", "min_properties",
        "max_properties", "additional_false", "additional", "properties", "required", "all_of",
        "any_of", "one_of", "not_", "has_type_check", "has_string", "has_number", "has_props", "fast_types",
        "enum_strings", "leaf",
    )

    def __init__(self, props: dict[str, Any], version: tuple[int, int] | None) -> None:
        g = props.get
        types = ["integer", "string"] if g("x-kubernetes-int-or-string") else [g("type")] if g("type") else []
        self.types = tuple(types)
        self.types_text = ",".join(types)
        self.nullable = bool(g("nullable"))
        fmt = g("format") or ""
        # formats.go strips what the version does not know; without a version all are kept
        self.fmt = effective_format(types[0] if len(types) == 1 else "", fmt, version) if version else fmt
        self.fmt_check = checker(self.fmt) if self.fmt else None
        self.fast_types = _FAST_TYPES.get(types[0], ()) if len(types) == 1 and not self.fmt else ()
        self.enum = list(g("enum")) if g("enum") else None
        # a string only ever matches string enum values, by equality
        self.enum_strings = frozenset(e for e in self.enum or () if isinstance(e, str))
        self._compile_scalars(props)
        self._compile_children(props, version)
        self.has_type_check = bool(self.types or self.fmt)
        self.has_string = self.max_length is not None or self.min_length is not None or bool(self.pattern)
        self.has_number = self.maximum is not None or self.minimum is not None or self.multiple_of is not None
        self.has_props = bool(self.all_of or self.any_of or self.one_of or self.not_)
        self.leaf = self._leaf()

    def _leaf(self) -> tuple[type, int] | None:
        """(Python type, MatchCount) of values that pass with nothing else to check, for a fast path."""
        if self.fmt or self.enum or self.has_props or self.has_string or self.has_number or len(self.types) != 1:
            return None
        # MatchCount: final + type (applies, passes) + junctors (empty) + kind-specific + enum
        return {"string": (str, 7), "boolean": (bool, 6), "number": (float, 8)}.get(self.types[0])

    def _compile_scalars(self, props: dict[str, Any]) -> None:
        g = props.get
        self.max_length, self.min_length = g("maxLength"), g("minLength")
        self.pattern = g("pattern") or ""
        self.pattern_error = compile_go_regexp(self.pattern)[1] if self.pattern else None
        self.maximum, self.minimum = _float(g("maximum")), _float(g("minimum"))
        self.exclusive_maximum, self.exclusive_minimum = bool(g("exclusiveMaximum")), bool(g("exclusiveMinimum"))
        self.multiple_of = _float(g("multipleOf"))
        self.min_items, self.max_items = g("minItems"), g("maxItems")
        self.unique_items = bool(g("uniqueItems"))
        self.min_properties, self.max_properties = g("minProperties"), g("maxProperties")
        self.required = list(g("required") or ())

    def _compile_children(self, props: dict[str, Any], version: tuple[int, int] | None) -> None:
        g = props.get
        items = g("items")
        self.items = _Node(items, version) if isinstance(items, dict) else None
        self.properties = {k: _Node(v or {}, version) for k, v in (g("properties") or {}).items()}
        additional = g("additionalProperties")
        self.additional_false = additional is False
        self.additional = _Node(additional, version) if isinstance(additional, dict) else None
        self.all_of = [_Node(x or {}, version) for x in g("allOf") or ()]
        self.any_of = [_Node(x or {}, version) for x in g("anyOf") or ()]
        self.one_of = [_Node(x or {}, version) for x in g("oneOf") or ()]
        self.not_ = _Node(g("not"), version) if g("not") is not None else None

    # --- SchemaValidator.Validate ----------------------------------------------------

    def check(self, v: Any, name: str, errs: list[Err]) -> int:
        if v is None:
            mc = self._check_type_nil(name, errs)
            if self.enum:
                errs.append(_enum_error(name, v, self.enum))
            return mc
        t = type(v)
        mc = 1
        if self.has_type_check:
            mc += 2 if t in self.fast_types else 1 + self._check_type(v, name, errs)
        mc += 1 + (self._check_props(v, name, errs) if self.has_props else 1)
        if t is str:
            mc += 1
            if self.has_string:
                self._check_string(v, name, errs)
            if self.fmt_check is not None:
                mc += 1
                if not self.fmt_check(v):
                    errs.append(_type_error(name, self.fmt, v))
        elif t is int or t is float:
            mc += 2
            if self.has_number:
                self._check_number(v, name, errs)
        elif t is list:
            mc += 2 + self._check_slice(v, name, errs)
        mc += 1
        if self.enum and not (v in self.enum_strings if t is str else any(gv.enum_matches(v, e) for e in self.enum)):
            errs.append(_enum_error(name, v, self.enum))
        if t is dict:
            mc += 1 + self._check_object(v, name, errs)
        return mc

    def _check_type_nil(self, name: str, errs: list[Err]) -> int:
        if self.types and "null" not in self.types and not self.nullable:
            errs.append(_type_error(name, self.types_text, "null"))
            return 0
        return 1

    def _check_type(self, v: Any, name: str, errs: list[Err]) -> int:
        kind = _kind(v)
        types = self.types
        float_int = kind == "number" and "integer" in types and gv.is_json_integer(float(v))
        int_float = kind == "integer" and "number" in types
        data_fmt = "int64" if kind == "integer" else "float64" if kind == "number" else ""
        if kind not in ("string", "array") and self.fmt and not (
                kind in types or data_fmt == self.fmt or float_int or int_float):
            errs.append(_type_error(name, self.fmt, data_fmt))
            return 0
        if self.fmt and kind in ("string", "array") and "number" not in types and "integer" not in types:
            return 1
        if not (kind in types or float_int or int_float):
            errs.append(_type_error(name, self.types_text, kind))
            return 0
        return 1

    def _check_string(self, v: str, name: str, errs: list[Err]) -> None:
        if self.max_length is not None and len(v) > self.max_length:
            errs.append((TOO_LONG, name, v, self.max_length,
                         f"{name} in body should be at most {self.max_length} chars long"))
        elif self.min_length is not None and len(v) < self.min_length:
            errs.append((OTHER, name, v, self.min_length,
                         f"{name} in body should be at least {self.min_length} chars long"))
        elif self.pattern:
            matches, err = go_regexp_test(self.pattern)
            if matches is None:
                shown = f"{self.pattern}, but pattern is invalid: {err}"
                errs.append((OTHER, name, v, None, f"{name} in body should match '{shown}'"))
            elif not matches(v):
                errs.append((OTHER, name, v, None, f"{name} in body should match '{self.pattern}'"))

    def _check_number(self, v: int | float, name: str, errs: list[Err]) -> None:
        native_int = gv.is_int(v)
        if self.multiple_of is not None:
            err = _multiple_of(name, v, self.multiple_of, native_int)
            if err:
                errs.append(err)
        if self.minimum is not None:
            limit: int | float = gv.go_int64(self.minimum) if native_int else self.minimum
            if (v <= limit) if self.exclusive_minimum else (v < limit):
                rel = "greater than" if self.exclusive_minimum else "greater than or equal to"
                errs.append((OTHER, name, v, None, f"{name} in body should be {rel} {gv.go_v(limit)}"))
        if self.maximum is not None:
            limit = gv.go_int64(self.maximum) if native_int else self.maximum
            if (v >= limit) if self.exclusive_maximum else (v > limit):
                rel = "less than" if self.exclusive_maximum else "less than or equal to"
                errs.append((OTHER, name, v, None, f"{name} in body should be {rel} {gv.go_v(limit)}"))

    def _check_slice(self, v: list[Any], name: str, errs: list[Err]) -> int:
        mc = 0
        items = self.items
        if items is not None:
            leaf = items.leaf
            for i, item in enumerate(v):
                if leaf is not None and type(item) is leaf[0]:
                    mc += leaf[1]
                else:
                    mc += items.check(item, f"{name}[{i}]", errs)
        size = len(v)
        if self.min_items is not None and size < self.min_items:
            errs.append((OTHER, name, size, self.min_items,
                         f"{name} in body should have at least {self.min_items} items"))
        if self.max_items is not None and size > self.max_items:
            errs.append((MAX_ITEMS, name, size, self.max_items,
                         f"{name} in body should have at most {self.max_items} items"))
        if self.unique_items and not gv.unique_items_ok(v):
            errs.append((OTHER, name, None, None, f"{name} in body shouldn't contain duplicates"))
        return mc

    def _check_object(self, v: dict[str, Any], name: str, errs: list[Err]) -> int:
        size = len(v)
        if self.min_properties is not None and size < self.min_properties:
            errs.append((OTHER, name, size, self.min_properties,
                         f"{name} in body should have at least {self.min_properties} properties"))
        if self.max_properties is not None and size > self.max_properties:
            errs.append((TOO_MANY_PROPERTIES, name, size, self.max_properties,
                         f"{name} in body should have at most {self.max_properties} properties"))
        mc = 0
        props = self.properties
        if self.additional_false:
            for k in v:
                if k not in props:
                    errs.append((OTHER, name, k, None, f"{name}.{k} in body is a forbidden property"))
        elif self.additional is not None:
            for k, item in v.items():
                if k not in props:
                    mc += self.additional.check(item, f"{name}.{k}", errs)
        if props:
            for k, node in props.items():
                if k in v:
                    item = v[k]
                    leaf = node.leaf
                    if leaf is not None and type(item) is leaf[0]:
                        mc += leaf[1]
                    else:
                        mc += node.check(item, _child(name, k), errs)
        for k in self.required:
            if k not in v:
                errs.append((REQUIRED, f"{name}.{k}", None, None, f"{name}.{k} in body is required"))
        return mc

    def _check_props(self, v: Any, name: str, errs: list[Err]) -> int:
        mc = 1
        if self.any_of:
            mc += any_of(self.any_of, v, name, errs)
        if self.one_of:
            mc += one_of(self.one_of, v, name, errs)
        if self.all_of:
            mc += all_of(self.all_of, v, name, errs)
        if self.not_ is not None:
            if not branch(self.not_, v, name)[0]:
                errs.append((COMPOSITE, name, None, None, f"{go_quote(name)} must not validate the schema (not)"))
        return mc


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _enum_error(name: str, value: Any, enum: list[Any]) -> Err:
    return (ENUM, name, value, enum, f"{name} in body should be one of {enum!r}")


def _multiple_of(name: str, v: int | float, factor: float, native_int: bool) -> Err | None:
    if native_int:
        ifactor = gv.go_int64(factor)
        if ifactor <= 0:
            return (OTHER, name, ifactor, None, f"factor MultipleOf declared for {name} must be positive: {ifactor}")
        if v % ifactor != 0:
            return (OTHER, name, v, None, f"{name} in body should be a multiple of {ifactor}")
        return None
    if factor <= 0:
        return (OTHER, name, factor, None,
                f"factor MultipleOf declared for {name} must be positive: {gv.go_v(factor)}")
    mult = 1 / factor * v if factor < 1 else v / factor
    if not gv.is_json_integer(mult):
        return (OTHER, name, v, None, f"{name} in body should be a multiple of {gv.go_v(factor)}")
    return None


class SchemaValidator:
    """A CRD version's OpenAPI v3 schema compiled for value validation (``NewSchemaValidator``).

    ``compatibility_version`` picks the formats validated (formats.go); kube-apiserver 1.34 uses
    its minimum compatibility version, 1.33. ``None`` keeps every format, as the validator of
    default values (built from ``Structural.ToKubeOpenAPI``) does.
    """

    def __init__(self, props: dict[str, Any] | None,
                 compatibility_version: tuple[int, int] | None = DEFAULT_COMPATIBILITY_VERSION) -> None:
        self._props = props or {}
        self._root = _Node(self._props, compatibility_version)

    def raw_errors(self, obj: Any, name: str = "") -> list[Err]:
        """kube-openapi's result errors (deduplicated), before the field error mapping."""
        errs: list[Err] = []
        self._root.check(obj, name, errs)
        return unique(errs) if len(errs) > 1 else errs

    def validate(self, obj: Any, path: Path | None = None) -> ErrorList:
        """``ValidateCustomResource(path, obj, validator)``."""
        return [to_field_error(path, e) for e in self.raw_errors(obj)]

    def validate_update(self, obj: Any, old: Any, path: Path | None = None) -> ErrorList:
        """``ValidateCustomResourceUpdate`` with ratcheting: errors inside values that did not
        change are dropped (upstream turns them into warnings it does not report)."""
        errs = self.raw_errors(obj)
        if not errs or old is None:
            return [to_field_error(path, e) for e in errs]
        unchanged = unchanged_names(obj, old, self._props)
        return [to_field_error(path, e) for e in errs if not is_ratcheted(e[1], unchanged)]
