"""The FieldsV1 wire format of a field set (metav1.ManagedFieldsEntry.fieldsV1).

Each key names a path element: `f:<name>`, `k:<json object of key fields>`, `v:<json value>` or
`i:<index>`; `{}` marks a leaf member, and `.` inside a child marks the child itself as a member."""

from __future__ import annotations

import json
import re
from typing import Any

from . import fieldpath
from .fieldpath import FieldSet, PathElement
from .values import go_json, go_json_string, thaw

SELF = "."
_INDEX = re.compile(r"[+-]?[0-9]+")


class FieldsV1Error(ValueError):
    pass


class _UnknownElementType(Exception):
    pass


# ---- path elements ----

def serialize_element(element: PathElement) -> str:
    kind, payload = element
    if kind == fieldpath.FIELD:
        return "f:" + payload
    if kind == fieldpath.KEY:
        fields = ",".join(f"{go_json_string(name)}:{go_json(thaw(frozen))}" for name, frozen in payload)
        return "k:{" + fields + "}"
    if kind == fieldpath.VALUE:
        return "v:" + go_json(thaw(payload))
    return f"i:{payload}"


def deserialize_element(text: str) -> PathElement:
    if len(text) < 2:
        raise FieldsV1Error("key must be 2 characters long:")
    if text[1] != ":":
        raise FieldsV1Error(f"missing colon: {text}")
    kind, rest = text[0], text[2:]
    if kind == "f":
        return fieldpath.field(rest)
    if kind == "v":
        return fieldpath.value(_json(rest))
    if kind == "k":
        return fieldpath.key(_json_pairs(rest))
    if kind == "i":
        if not _INDEX.fullmatch(rest):
            raise FieldsV1Error(f'strconv.Atoi: parsing "{rest}": invalid syntax')
        return fieldpath.index(int(rest))
    raise _UnknownElementType(text)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as err:
        raise FieldsV1Error(str(err)) from None


class _Pairs(list[tuple[str, Any]]):
    """A JSON object read with its members in order (duplicates kept, as json-iterator reads them)."""


def _json_pairs(text: str) -> list[tuple[str, Any]]:
    try:
        pairs = json.loads(text, object_pairs_hook=_Pairs)
    except ValueError as err:
        raise FieldsV1Error(str(err)) from None
    if not isinstance(pairs, _Pairs):
        raise FieldsV1Error("ReadObjectCB: expect { or n")
    return [(name, _plain(item)) for name, item in pairs]


def _plain(item: Any) -> Any:
    if isinstance(item, _Pairs):
        return {name: _plain(value) for name, value in item}
    if isinstance(item, list):
        return [_plain(value) for value in item]
    return item


# ---- sets ----

def set_to_fields(fields: FieldSet) -> dict[str, Any]:
    """Set.ToJSON as a parsed JSON object, keys in SMD's order."""
    return _emit(fields, include_self=False)


def set_to_json(fields: FieldSet) -> str:
    return json.dumps(set_to_fields(fields), separators=(",", ":"), ensure_ascii=False)


def _emit(fields: FieldSet, include_self: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if include_self and (fields.members or fields.children):
        out[SELF] = {}
    for element in sorted(fields.members | set(fields.children)):
        child = fields.children.get(element)
        name = serialize_element(element)
        if child is None:
            out[name] = {}
        else:
            out[name] = _emit(child, include_self=element in fields.members)
    return out


def fields_to_set(raw: Any) -> FieldSet:
    """Set.FromJSON of a parsed fieldsV1 object; raises FieldsV1Error."""
    if raw is None:
        return FieldSet()
    if not isinstance(raw, dict):
        raise FieldsV1Error("ReadMapCB: expect { or n")
    found, _ = _read(raw)
    return found or FieldSet()


def _read(raw: dict[str, Any]) -> tuple[FieldSet | None, bool]:
    children: FieldSet | None = None
    is_member = False
    for name, sub in raw.items():
        if name == SELF:
            is_member = True
            continue
        try:
            element = deserialize_element(name)
        except _UnknownElementType:
            continue
        if sub is not None and not isinstance(sub, dict):
            raise FieldsV1Error("ReadMapCB: expect { or n")
        grandchildren, child_is_member = _read(sub or {})
        if child_is_member:
            children = children or FieldSet()
            children.members.add(element)
        if grandchildren is not None:
            children = children or FieldSet()
            children.children[element] = grandchildren
    if children is None:
        is_member = True
    return children, is_member
