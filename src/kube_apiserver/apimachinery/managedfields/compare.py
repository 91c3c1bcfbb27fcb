"""Which fields differ between two objects (SMD's TypedValue.Compare): added, removed, modified."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fieldpath import FIELD, FieldSet, PathCursor, PathElement
from .schematype import DEDUCED, Atom, FieldTypes, ItemError, ListType, TypeRef, deduce, item_element, resolve
from .validate import validate, validate_atom
from .values import ABSENT, equal


@dataclass
class Comparison:
    removed: FieldSet
    modified: FieldSet
    added: FieldSet
    # With compare(checked=True): whether either side fails validate(allow_duplicates=True, strict=False),
    # found on the same walk instead of two more over both objects.
    invalid: bool = False

    def without(self, ignored: FieldSet | None) -> Comparison:
        """ExcludeFields / an exclude filter: drops the ignored fields and everything under them."""
        if ignored is None or ignored.empty():
            return self
        return Comparison(self.removed.recursive_difference(ignored),
                          self.modified.recursive_difference(ignored),
                          self.added.recursive_difference(ignored), self.invalid)

    def is_same(self) -> bool:
        return self.removed.empty() and self.modified.empty() and self.added.empty()


def compare(lhs: Any, rhs: Any, ref: TypeRef, checked: bool = False, shortcuts: bool = True) -> Comparison:
    """`checked`: also sets `invalid` as validate(allow_duplicates=True, strict=False) of either side would.
    `shortcuts=False` walks every value the general way (for tests: the result is the same)."""
    comparison = Comparison(FieldSet(), FieldSet(), FieldSet())
    walker = _Walker(comparison, checked)
    walker.shortcuts = shortcuts
    walker.walk(lhs, rhs, ref, PathCursor())
    return comparison


class _State:
    __slots__ = ("lhs", "rhs", "path", "in_leaf")

    def __init__(self, lhs: Any, rhs: Any, path: PathCursor) -> None:
        self.lhs, self.rhs, self.path, self.in_leaf = lhs, rhs, path, False

    def copy(self) -> _State:
        return _State(self.lhs, self.rhs, self.path)


# The JSON scalars' exact types (deduce narrows any instance of them to a scalar; a subclass takes the general way).
_SCALARS = frozenset((str, int, float, bool))


def _as_map(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _as_list(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) else None


def _fails(value: Any, atom: Atom) -> bool:
    """validate(allow_duplicates=True, strict=False)'s verdict on a value at its own level (its deduced
    atom), and below it where the walk does not go (an atomic map or list)."""
    if value is None or value is ABSENT:
        return False
    if atom.map is not None:
        return not isinstance(value, dict) or (atom.map.atomic and bool(validate_atom(value, atom)))
    if atom.scalar is not None:
        return False
    if atom.list is not None:
        return not isinstance(value, list) or (
            atom.list.relationship == "atomic" and bool(validate_atom(value, atom)))
    return False


class _Walker:
    # The shortcuts for maps and scalars where the schema expects them (most of a walk); the general way gives
    # the same comparison and verdict (a property test checks it with shortcuts off).
    shortcuts = True

    def __init__(self, comparison: Comparison, checked: bool = False) -> None:
        self.out = comparison
        self.checked = checked

    def walk(self, lhs: Any, rhs: Any, ref: TypeRef, path: PathCursor) -> None:
        if lhs is ABSENT:
            self.added(rhs, ref, path)
            return
        atom = resolve(ref)
        if self.shortcuts and type(lhs) is dict and type(rhs) is dict and atom.map is not None:
            # Two maps where a map goes (most of a walk): both deduce to the map part, so the general case
            # below would compare them with do_map and record nothing itself.
            part = atom.map_part
            if self.checked and not self.out.invalid:
                self.out.invalid = _fails(lhs, part) or _fails(rhs, part)
            self.do_map(part, _State(lhs, rhs, path))
            return
        left, right = deduce(atom, lhs), deduce(atom, rhs)
        if self.checked and not self.out.invalid:
            self.out.invalid = _fails(lhs, left) or _fails(rhs, right)
        state = _State(lhs, rhs, path)
        if rhs is ABSENT:
            self.handle(left, state)
        elif lhs is ABSENT or left.parts() == right.parts():
            self.handle(right, state)
        else:
            self.handle(left, state.copy())
            self.handle(right, state)
        if not state.in_leaf:
            if lhs is ABSENT:
                self.out.added.insert_at(path)
            elif rhs is ABSENT:
                self.out.removed.insert_at(path)

    def added(self, value: Any, ref: TypeRef, path: PathCursor) -> None:
        """walk(ABSENT, value): the value and everything in it is added. One-sided, as most of a create's and
        of a new subtree's walk is: the same sets and verdict without a left side to deduce and compare."""
        if not self.shortcuts:
            self.added_by_path(value, ref, path)
            return
        below = self.added_below(value, ref)
        if path.parent is None:  # the root: what is below it are the set's own members
            if below is not None:
                _graft(self.out.added, below)
            return
        parent = path.parent.node_in(self.out.added)
        parent.members.add(path.element)
        if below is not None:
            mine = parent.children.get(path.element)
            if mine is None:
                parent.children[path.element] = below
            else:
                _graft(mine, below)

    def added_below(self, value: Any, ref: TypeRef) -> FieldSet | None:
        """The paths added under `value` (relative to it; None when there are none), built bottom-up: no
        cursor, and no descent from the root of the added set, per member."""
        atom = deduce(resolve(ref), value)
        if self.checked and not self.out.invalid:
            self.out.invalid = _fails(value, atom)
        if atom.map is not None:
            if atom.map.atomic or not value or not isinstance(value, dict):
                return None
            types = atom.map.types
            declared, other = types.declared, types.other
            takes_scalar, other_takes_scalar = types.takes_scalar, types.other_takes_scalar
            node = FieldSet()
            members, children = node.members, node.children
            for name, child in value.items():
                element = (FIELD, name)
                members.add(element)
                if type(child) in _SCALARS and takes_scalar.get(name, other_takes_scalar):
                    continue  # a scalar where a scalar goes: a leaf, valid
                below = self.added_below(child, declared.get(name, other) or DEDUCED)
                if below is not None:
                    children[element] = below
            return node
        list_type = atom.list
        if list_type is None or list_type.relationship == "atomic" or not value or not isinstance(value, list):
            return None
        order: list[PathElement] = []
        groups = _group(list_type, value, order, {}, self.out if self.checked else None)
        if not order:
            return None
        node = FieldSet()
        for element in order:
            group = groups[element]
            node.members.add(element)
            if len(group) == 1:
                below = self.added_below(group[0], list_type.item)
                if below is not None:
                    node.children[element] = below
            elif self.checked and not self.out.invalid:
                self.out.invalid = any(validate(item, list_type.item, allow_duplicates=True, strict=False)
                                       for item in group)
        return node

    def added_by_path(self, value: Any, ref: TypeRef, path: PathCursor) -> None:
        """added, inserting each path where it is found (the general way)."""
        atom = deduce(resolve(ref), value)
        if self.checked and not self.out.invalid:
            self.out.invalid = _fails(value, atom)
        if atom.map is not None:
            if not atom.map.atomic and isinstance(value, dict) and value:
                field_type = atom.map.field_type
                for name, child in value.items():
                    self.added_by_path(child, field_type(name) or DEDUCED, path.child((FIELD, name)))
        elif atom.list is not None:
            list_type = atom.list
            if list_type.relationship != "atomic" and isinstance(value, list) and value:
                self.added_items(list_type, value, path)
        self.out.added.insert_at(path)

    def added_items(self, list_type: ListType, items: list[Any], path: PathCursor) -> None:
        order: list[PathElement] = []
        groups = _group(list_type, items, order, {}, self.out if self.checked else None)
        for element in order:
            group, item_path = groups[element], path.child(element)
            if len(group) == 1:
                self.added_by_path(group[0], list_type.item, item_path)
                continue
            if self.checked and not self.out.invalid:
                self.out.invalid = any(validate(value, list_type.item, allow_duplicates=True, strict=False)
                                       for value in group)
            self.out.added.insert_at(item_path)

    def handle(self, atom: Atom, state: _State) -> None:
        if atom.map is not None:
            self.do_map(atom, state)
        elif atom.scalar is not None:
            self.leaf(state)
        elif atom.list is not None:
            self.do_list(atom, state)

    def leaf(self, state: _State) -> None:
        if state.in_leaf:
            return
        state.in_leaf = True
        if state.lhs is ABSENT:
            self.out.added.insert_at(state.path)
        elif state.rhs is ABSENT:
            self.out.removed.insert_at(state.path)
        elif not equal(state.lhs, state.rhs):
            self.out.modified.insert_at(state.path)

    def do_map(self, atom: Atom, state: _State) -> None:
        assert atom.map is not None
        lhs, rhs = _as_map(state.lhs), _as_map(state.rhs)
        if atom.map.atomic or (not lhs and not rhs):
            self.leaf(state)
            return
        if self.shortcuts:
            self.members(atom.map.types, lhs or {}, rhs or {}, state.path)
            return
        for name in _zip_keys(lhs, rhs):
            left = lhs.get(name, ABSENT) if lhs else ABSENT
            right = rhs.get(name, ABSENT) if rhs else ABSENT
            self.walk(left, right, atom.map.field_type(name) or DEDUCED, state.path.child((FIELD, name)))

    def members(self, types: FieldTypes, lhs: dict[str, Any], rhs: dict[str, Any], path: PathCursor) -> None:
        """do_map's walk of the members of both sides, with shortcuts for scalars where a scalar goes: such a
        member is a leaf, valid, modified when the two differ and added when only `rhs` has it (what walk and
        added do, without their cursor, deductions and state)."""
        declared, other, takes_scalar, other_takes_scalar = (
            types.declared, types.other, types.takes_scalar, types.other_takes_scalar)
        in_both = 0
        for name, left in lhs.items():
            right = rhs.get(name, ABSENT)
            if right is not ABSENT:
                in_both += 1
            if type(left) in _SCALARS and type(right) in _SCALARS and takes_scalar.get(name, other_takes_scalar):
                if not (type(left) is type(right) and left == right) and not equal(left, right):
                    self.out.modified.insert_at(path.child((FIELD, name)))
                continue
            self.walk(left, right, declared.get(name, other) or DEDUCED, path.child((FIELD, name)))
        if in_both == len(rhs):
            return
        node: FieldSet | None = None  # this map's node in the added set, once a scalar member is added
        for name, right in rhs.items():
            if name in lhs:
                continue
            if type(right) in _SCALARS and takes_scalar.get(name, other_takes_scalar):
                if node is None:
                    node = path.node_in(self.out.added)
                node.members.add((FIELD, name))
                continue
            self.added(right, declared.get(name, other) or DEDUCED, path.child((FIELD, name)))

    def do_list(self, atom: Atom, state: _State) -> None:
        list_type = atom.list
        assert list_type is not None
        lhs, rhs = _as_list(state.lhs), _as_list(state.rhs)
        if list_type.relationship == "atomic" or (not lhs and not rhs):
            self.leaf(state)
            return
        order: list[PathElement] = []
        checked = self.out if self.checked else None
        left = _group(list_type, lhs or [], order, None, checked)
        right = _group(list_type, rhs or [], order, left, checked)
        for element in order:
            self.compare_group(list_type.item, state.path.child(element), left.get(element, []),
                               right.get(element, []))

    def compare_group(self, item: TypeRef, path: PathCursor, lhs: list[Any], rhs: list[Any]) -> None:
        if len(lhs) <= 1 and len(rhs) <= 1:
            self.walk(lhs[0] if lhs else ABSENT, rhs[0] if rhs else ABSENT, item, path)
            return
        if self.checked and not self.out.invalid:  # duplicates: the walk below skips some of them
            self.out.invalid = any(validate(value, item, allow_duplicates=True, strict=False)
                                   for value in (*lhs, *rhs))
        if len(lhs) >= 2 and len(rhs) >= 2:
            if len(lhs) != len(rhs) or not all(equal(a, b) for a, b in zip(lhs, rhs, strict=True)):
                self.out.modified.insert_at(path)
        elif len(lhs) >= 2:
            if rhs:
                self.walk(ABSENT, rhs[0], item, path)
            self.out.removed.insert_at(path)
        else:
            if lhs:
                self.walk(lhs[0], ABSENT, item, path)
            self.out.added.insert_at(path)


def _graft(node: FieldSet, below: FieldSet) -> None:
    """Adds the paths of `below` to `node` in place (cursors may know its nodes)."""
    node.members |= below.members
    for element, sub in below.children.items():
        mine = node.children.get(element)
        if mine is None:
            node.children[element] = sub
        else:
            _graft(mine, sub)


def _zip_keys(lhs: dict[str, Any] | None, rhs: dict[str, Any] | None) -> list[str]:
    keys = list(lhs or {})
    keys += [name for name in rhs or {} if not lhs or name not in lhs]
    return keys


def _group(list_type: ListType, items: list[Any], order: list[PathElement],
           other: dict[PathElement, list[Any]] | None, checked: Comparison | None = None,
           ) -> dict[PathElement, list[Any]]:
    """Items by path element, noting first-seen elements (not already in `other`) in `order`. An item
    without its keys is left out (and makes `checked` invalid, as validate finds it)."""
    groups: dict[PathElement, list[Any]] = {}
    for item in items:
        try:
            element = item_element(list_type, item)
        except ItemError:
            if checked is not None:
                checked.invalid = True
            continue
        if element in groups:
            groups[element].append(item)
            continue
        groups[element] = [item]
        if other is None or element not in other:
            order.append(element)
    return groups
