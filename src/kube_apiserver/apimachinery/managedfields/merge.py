"""Merging an applied configuration into a live object (SMD's TypedValue.Merge, keeping the right side).

Granular maps merge per key; associative lists merge item by item (by key or value) keeping the
live order around the applied items; scalars, atomic lists and atomic maps are replaced."""

from __future__ import annotations

from typing import Any

from . import fieldpath
from .fieldpath import PathElement
from .schematype import DEDUCED, Atom, ItemError, ListType, TypeRef, deduce, item_element, resolve
from .values import ABSENT


class MergeError(ValueError):
    pass


def merge(lhs: Any, rhs: Any, ref: TypeRef) -> Any:
    """The merged value, or ABSENT when nothing results."""
    return _walk(lhs, rhs, ref)


class _State:
    __slots__ = ("lhs", "rhs", "in_leaf", "out")

    def __init__(self, lhs: Any, rhs: Any) -> None:
        self.lhs, self.rhs = lhs, rhs
        self.in_leaf = False
        self.out: Any = ABSENT

    def copy(self) -> _State:
        return _State(self.lhs, self.rhs)


def _walk(lhs: Any, rhs: Any, ref: TypeRef) -> Any:
    atom = resolve(ref)
    left, right = deduce(atom, lhs), deduce(atom, rhs)
    state = _State(lhs, rhs)
    if rhs is ABSENT:
        _handle(left, state)
    elif lhs is ABSENT or left.parts() == right.parts():
        _handle(right, state)
    else:
        _handle(left, state.copy())
        _handle(right, state)
    return state.out


def _handle(atom: Atom, state: _State) -> None:
    if atom.map is not None:
        _map(atom, state)
    elif atom.scalar is not None:
        _leaf(state)
    elif atom.list is not None:
        _list(atom, state)


def _leaf(state: _State) -> None:
    if state.in_leaf:
        return
    state.in_leaf = True
    state.out = state.rhs if state.rhs is not ABSENT else state.lhs


def _map(atom: Atom, state: _State) -> None:
    assert atom.map is not None
    lhs = state.lhs if isinstance(state.lhs, dict) else None
    rhs = state.rhs if isinstance(state.rhs, dict) else None
    if atom.map.atomic or (not lhs and not rhs):
        _leaf(state)
        return
    out: dict[str, Any] = {}
    names = list(lhs or {}) + [name for name in rhs or {} if not lhs or name not in lhs]
    for name in names:
        child = _walk(lhs.get(name, ABSENT) if lhs else ABSENT, rhs.get(name, ABSENT) if rhs else ABSENT,
                      atom.map.field_type(name) or DEDUCED)
        if child is not ABSENT:
            out[name] = child
    if out:
        state.out = out


def _list(atom: Atom, state: _State) -> None:
    list_type = atom.list
    assert list_type is not None
    lhs = state.lhs if isinstance(state.lhs, list) else None
    rhs = state.rhs if isinstance(state.rhs, list) else None
    if list_type.relationship == "atomic" or (not lhs and not rhs):
        _leaf(state)
        return
    out = _ListMerge(list_type, lhs or [], rhs or []).run()
    if out:
        state.out = out


class _ListMerge:
    """mergingWalker.visitListItems: live items not applied keep their place; applied items follow
    the applied order, and live items sharing a key are merged where the applied item lands."""

    def __init__(self, list_type: ListType, lhs: list[Any], rhs: list[Any]) -> None:
        self.list_type, self.lhs = list_type, lhs
        self.rhs_elements, self.rhs_items = self.index(rhs, allow_duplicates=False)
        self.lhs_elements, self.lhs_items = self.index(lhs, allow_duplicates=True)
        self.out: list[Any] = []

    def index(self, items: list[Any], allow_duplicates: bool) -> tuple[list[PathElement], dict[PathElement, Any]]:
        elements: list[PathElement] = []
        observed: dict[PathElement, Any] = {}
        for position, item in enumerate(items):
            try:
                element = item_element(self.list_type, item)
            except ItemError as err:
                raise MergeError(f"element {position}: {err}") from None
            if element in observed:
                if not allow_duplicates:
                    raise MergeError(f"duplicate entries for key {fieldpath.element_string(element)}")
                observed[element] = None
            else:
                observed[element] = item
            elements.append(element)
        return elements, observed

    def emit(self, element: PathElement, lhs: Any, rhs: Any) -> None:
        merged = _walk(lhs, rhs, self.list_type.item)
        if merged is not ABSENT:
            self.out.append(merged)

    def run(self) -> list[Any]:
        lefts, rights = self.lhs_elements, self.rhs_elements
        shared = iter([element for element in rights if element in self.lhs_items])
        next_shared = next(shared, None)
        merged: set[PathElement] = set()
        left = right = 0
        while left < len(lefts) or right < len(rights):
            if left < len(lefts) and right < len(rights):
                element = lefts[left]
                if element == rights[right]:
                    merged.add(element)
                    self.emit(element, self.lhs_items[element], self.rhs_items[element])
                    left, right = left + 1, right + 1
                    next_shared = next(shared, None)
                    continue
                if element in self.rhs_items and next_shared is not None and next_shared != element:
                    left += 1
                    continue
            if left < len(lefts):
                element = lefts[left]
                if element not in self.rhs_items:
                    self.emit(element, self.lhs[left], ABSENT)
                    left += 1
                    continue
                if element in merged:
                    left += 1
            if right < len(rights):
                element = rights[right]
                merged.add(element)
                self.emit(element, self.lhs_items.get(element, ABSENT), self.rhs_items[element])
                right += 1
                if next_shared is not None and next_shared == element:
                    next_shared = next(shared, None)
        return self.out
