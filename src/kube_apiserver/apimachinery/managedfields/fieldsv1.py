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
    members, children = fields.members, fields.children
    out: dict[str, Any] = {}
    if include_self and (members or children):
        out[SELF] = {}
    if not children:  # a level of leaves (labels, data keys, a container's scalars)
        for element in sorted(members):
            out["f:" + element[1] if element[0] == fieldpath.FIELD else serialize_element(element)] = {}
        return out
    for element in sorted(members | children.keys()):
        child = children.get(element)
        name = "f:" + element[1] if element[0] == fieldpath.FIELD else serialize_element(element)
        if child is None:
            out[name] = {}
        else:
            out[name] = _emit(child, include_self=element in members)
    return out


def fields_to_set(raw: Any) -> FieldSet:
    """Set.FromJSON of a parsed fieldsV1 object; raises FieldsV1Error."""
    return read_fields(raw)[0]


def read_fields(raw: Any) -> tuple[FieldSet, bool]:
    """fields_to_set, and whether set_to_fields of the set gives `raw` back exactly (the same keys in the same
    order, as a server writes them): then a copy of `raw` is the set's encoding, with no walk to make it."""
    if raw is None:
        return FieldSet(), False
    if not isinstance(raw, dict):
        raise FieldsV1Error("ReadMapCB: expect { or n")
    canonical = [type(raw) is dict]
    found, _ = _read(raw, canonical, top=True)
    return found or FieldSet(), canonical[0]


def _read(raw: dict[str, Any], canonical: list[bool], top: bool = False) -> tuple[FieldSet | None, bool]:
    """The set below one level and whether that level is a member; clears canonical[0] when _emit would not
    write `raw` as it is (a misplaced or non-empty `.`, an unknown or non-canonical key, keys out of order,
    a null or empty level)."""
    children: FieldSet | None = None
    is_member = False
    previous: PathElement | None = None
    for position, (name, sub) in enumerate(raw.items()):
        if name == SELF:
            is_member = True
            if top or position or type(sub) is not dict or sub:
                canonical[0] = False
            continue
        if name[:2] == "f:":
            element: PathElement = (fieldpath.FIELD, name[2:])
        else:
            try:
                element = deserialize_element(name)
            except _UnknownElementType:
                canonical[0] = False
                continue
            if canonical[0] and serialize_element(element) != name:
                canonical[0] = False
        if sub is not None and not isinstance(sub, dict):
            raise FieldsV1Error("ReadMapCB: expect { or n")
        if canonical[0] and (type(sub) is not dict or (previous is not None and not previous < element)):
            canonical[0] = False
        previous = element
        if children is None:  # a known element is always a member or has members below it
            children = FieldSet()
        if not sub:  # {} (or null): a member with nothing below it, as _read({}) finds
            children.members.add(element)
            continue
        grandchildren, child_is_member = _read(sub, canonical)
        if child_is_member:
            children.members.add(element)
        if grandchildren is not None:
            children.children[element] = grandchildren
    if children is None:
        is_member = True
        if raw:  # only `.` or unknown keys: written back as {}
            canonical[0] = False
    return children, is_member


def copy_fields(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a fieldsV1 object read_fields found canonical (objects all the way down)."""
    return {name: copy_fields(sub) if sub else {} for name, sub in raw.items()}
