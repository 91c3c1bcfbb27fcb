"""Checks an object against its schema before it is merged (SMD's typed.AsTyped validation).

Errors are (path, message) pairs rendered the way structured-merge-diff renders them; an applied
configuration is checked strictly (undeclared fields and scalar types), live objects only for the
list keys that merging depends on."""

from __future__ import annotations

from typing import Any

from ..gostrconv import format_float as go_float
from ..gostrconv import quote as go_quote
from .fieldpath import element_string, index
from .schematype import DEDUCED, Atom, ItemError, TypeRef, deduce, item_element, resolve
from .values import ABSENT

Errors = list[tuple[str, str]]


def validate(value: Any, ref: TypeRef, allow_duplicates: bool, strict: bool) -> Errors:
    return _typed(value, deduce(resolve(ref), value), allow_duplicates, strict)


def validate_atom(value: Any, atom: Atom) -> Errors:
    """validate(allow_duplicates=True, strict=False) of a value at a position already resolved."""
    return _typed(value, deduce(atom, value), True, False)


def _typed(value: Any, atom: Atom, allow_duplicates: bool, strict: bool) -> Errors:
    if atom.map is not None:
        return _map(value, atom, allow_duplicates, strict)
    if atom.scalar is not None:
        return _scalar(atom.scalar, value) if strict else []
    if atom.list is not None:
        return _list(value, atom, allow_duplicates, strict)
    return []


def render(errors: Errors) -> str:
    """ValidationErrors.Error()."""
    lines = [f"{path}: {message}" if path else message for path, message in errors]
    if len(lines) == 1:
        return lines[0]
    return "\n".join(["errors:"] + ["  " + line for line in lines])


def _prefixed(prefix: str, errors: Errors) -> Errors:
    return [(prefix + path, message) for path, message in errors]


def _map(value: Any, atom: Atom, allow_duplicates: bool, strict: bool) -> Errors:
    assert atom.map is not None
    if value is None or value is ABSENT:
        return []
    if not isinstance(value, dict):
        return [("", f"expected map, got {go_v_pointer(value)}")]
    errors: Errors = []
    for name, item in value.items():
        child = atom.map.field_type(name)
        if child is None and strict:
            errors.append(("." + name, "field not declared in schema"))
            break
        errors += _prefixed("." + name, validate(item, child or DEDUCED, allow_duplicates, strict))
    return errors


def _list(value: Any, atom: Atom, allow_duplicates: bool, strict: bool) -> Errors:
    list_type = atom.list
    assert list_type is not None
    if value is None or value is ABSENT:
        return []
    if not isinstance(value, list):
        return [("", f"expected list, got {go_v_pointer(value)}")]
    errors: Errors = []
    seen = set()
    for position, item in enumerate(value):
        if list_type.relationship == "atomic":
            element = index(position)
        else:
            try:
                element = item_element(list_type, item)
            except ItemError as err:
                return errors + [("", f"element {position}: {err}")]
            if element in seen and not allow_duplicates:
                errors.append(("", f"duplicate entries for key {element_string(element)}"))
            seen.add(element)
        errors += _prefixed(element_string(element), validate(item, list_type.item, allow_duplicates, strict))
    return errors


def _scalar(kind: str, value: Any) -> Errors:
    if value is None or value is ABSENT:
        return []
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "numeric" and not is_number:
        return [("", f"expected numeric (int or float), got {go_type(value)}")]
    if kind == "string" and not isinstance(value, str):
        return [("", f"expected string, got &value.valueUnstructured{{Value:{go_sharp(value)}}}")]
    if kind == "boolean" and not isinstance(value, bool):
        return [("", f"expected boolean, got {go_v_pointer(value)}")]
    if kind == "untyped" and isinstance(value, dict | list):
        return [("", f"expected any scalar, got {go_v_pointer(value)}")]
    return []


# ---- Go's fmt verbs on unstructured values ----

def go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def go_v(value: Any) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return str(value)


def go_v_pointer(value: Any) -> str:
    return "&{" + go_v(value) + "}"


def go_sharp(value: Any) -> str:
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(
            f"{go_quote(k)}:{go_sharp(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    return go_v(value)
