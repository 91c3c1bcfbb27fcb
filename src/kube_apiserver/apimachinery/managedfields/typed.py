"""The set of fields an object sets (SMD's TypedValue.ToFieldSet), walked with its schema.

Scalars, atomic lists and atomic maps are leaves; items of associative lists are named by their
keys (map lists) or values (set lists); granular maps are walked per key."""

from __future__ import annotations

from typing import Any

from . import fieldpath
from .fieldpath import FieldSet, PathCursor, PathElement
from .schematype import DEDUCED, Atom, ItemError, ListType, TypeRef, deduce, item_element, resolve


def to_field_set(value: Any, ref: TypeRef) -> FieldSet:
    out = FieldSet()
    _walk(value, ref, PathCursor(), out)
    return out


def _walk(value: Any, ref: TypeRef, path: PathCursor, out: FieldSet) -> None:
    atom = deduce(resolve(ref), value)
    if atom.map is not None:
        _map(value, atom, path, out)
    elif atom.scalar is not None:
        out.insert_at(path)
    elif atom.list is not None:
        _list(value, atom, path, out)


def _map(value: Any, atom: Atom, path: PathCursor, out: FieldSet) -> None:
    assert atom.map is not None
    if atom.map.atomic:
        out.insert_at(path)
        return
    if not isinstance(value, dict):
        return
    for name, item in value.items():
        child_path = path.child(fieldpath.field(name))
        _walk(item, atom.map.field_type(name) or DEDUCED, child_path, out)
        if item is None or (isinstance(item, dict) and not item) or not atom.map.declares(name):
            out.insert_at(child_path)


def _list(value: Any, atom: Atom, path: PathCursor, out: FieldSet) -> None:
    list_type = atom.list
    assert list_type is not None
    if list_type.relationship == "atomic":
        out.insert_at(path)
        return
    if not isinstance(value, list):
        return
    elements = [_element(list_type, item) for item in value]
    seen: set[Any] = set()
    duplicates: set[Any] = set()
    for element in elements:
        if element in seen and element not in duplicates:
            out.insert_at(path.child(element))
            duplicates.add(element)
        seen.add(element)
    for element, item in zip(elements, value, strict=True):
        if element in duplicates:
            continue
        item_path = path.child(element)
        _walk(item, list_type.item, item_path, out)
        out.insert_at(item_path)


def _element(list_type: ListType, item: Any) -> PathElement:
    try:
        return item_element(list_type, item)
    except ItemError:
        return (fieldpath.INDEX, -1)


def ensure_named_fields_are_members(fields: FieldSet, ref: TypeRef | None) -> FieldSet:
    """Set.EnsureNamedFieldsAreMembers: children that are declared struct fields become members too."""
    atom = resolve(ref) if ref is not None else None
    out = FieldSet()
    out.members = set(fields.members)
    for element, child in fields.children.items():
        child_ref: TypeRef | None = None
        if element[0] == fieldpath.FIELD and atom is not None and atom.map is not None:
            if atom.map.declares(element[1]):
                out.members.add(element)
            child_ref = atom.map.field_type(element[1]) or DEDUCED
        elif element[0] == fieldpath.KEY and atom is not None and atom.list is not None:
            child_ref = atom.list.item
        out.children[element] = ensure_named_fields_are_members(child, child_ref)
    return out
