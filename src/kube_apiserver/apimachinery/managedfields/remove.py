"""Removing a set of fields from an object (SMD's TypedValue.RemoveItems), walked with its schema.

A container left empty by the removal disappears from its parent (Kubernetes' typed round trip
drops such nulls for built-in kinds)."""

from __future__ import annotations

from typing import Any

from . import fieldpath
from .fieldpath import FieldSet
from .schematype import DEDUCED, ItemError, ListType, TypeRef, deduce, item_element, resolve
from .values import ABSENT


def remove_items(value: Any, fields: FieldSet, ref: TypeRef) -> Any:
    """The object without `fields`; {} when nothing remains of a map root."""
    out = _remove(value, fields, ref)
    if out is ABSENT:
        return {} if isinstance(value, dict) else None
    return out


def _remove(value: Any, fields: FieldSet, ref: TypeRef) -> Any:
    atom = deduce(resolve(ref), value)
    if atom.map is not None:
        if not isinstance(value, dict) or not value or atom.map.atomic:
            return ABSENT
        out = {}
        for name, item in value.items():
            element = fieldpath.field(name)
            if fields.has((element,)):
                continue
            below = fields.with_prefix(element)
            if not below.empty():
                item = _remove(item, below, atom.map.field_type(name) or DEDUCED)
                if item is ABSENT:
                    continue
            out[name] = item
        return out or ABSENT
    if atom.scalar is not None:
        return value
    if atom.list is not None:
        return _remove_list(value, fields, atom.list)
    return ABSENT


def _remove_list(value: Any, fields: FieldSet, list_type: ListType) -> Any:
    if not isinstance(value, list) or not value or list_type.relationship == "atomic":
        return ABSENT
    out = []
    for item in value:
        try:
            element = item_element(list_type, item)
        except ItemError:
            out.append(item)
            continue
        if fields.has((element,)):
            continue
        below = fields.with_prefix(element)
        if not below.empty():
            item = _remove(item, below, list_type.item)
            item = None if item is ABSENT else item
        out.append(item)
    return out or ABSENT
