"""Field paths and sets of them, as structured-merge-diff's fieldpath package defines them.

A path element is a tuple (kind, payload) so that Python's tuple order is SMD's order:
field names < associative-list keys < set values < list indexes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .values import Frozen, freeze, thaw, to_string

FIELD, KEY, VALUE, INDEX = range(4)

PathElement = tuple[Any, ...]
Path = tuple[PathElement, ...]


def field(name: str) -> PathElement:
    return (FIELD, name)


def key(pairs: list[tuple[str, Any]]) -> PathElement:
    """An associative-list item named by its key fields (sorted by name, stably)."""
    ordered = sorted(((name, freeze(value)) for name, value in pairs), key=lambda pair: pair[0])
    return (KEY, tuple(ordered))


def value(item: Any) -> PathElement:
    return (VALUE, freeze(item))


def index(position: int) -> PathElement:
    return (INDEX, position)


def key_fields(element: PathElement) -> list[tuple[str, Any]]:
    return [(name, thaw(frozen)) for name, frozen in element[1]]


def element_string(element: PathElement) -> str:
    """PathElement.String(): .name, [k=v,...], [=v] or [i]."""
    kind, payload = element
    if kind == FIELD:
        return "." + payload
    if kind == KEY:
        return "[" + ",".join(f"{name}={to_string(thaw(frozen))}" for name, frozen in payload) + "]"
    if kind == VALUE:
        return f"[={to_string(thaw(payload))}]"
    return f"[{payload}]"


def path_string(path: Path) -> str:
    return "".join(element_string(element) for element in path)


def make_path(*parts: str | int) -> Path:
    return tuple(field(part) if isinstance(part, str) else index(part) for part in parts)


def frozen_value(element: PathElement) -> Frozen:
    return element[1]


class FieldSet:
    """fieldpath.Set: members (leaf path elements) and children (sub-sets by path element).

    Operations return new sets and may share unchanged children; only `insert` mutates."""

    __slots__ = ("members", "children", "_trail")

    def __init__(self, *paths: Path) -> None:
        self.members: set[PathElement] = set()
        self.children: dict[PathElement, FieldSet] = {}
        # The last path inserted below this set and the node at each of its prefixes: walks insert
        # neighbouring paths (a child's, then its parent's), which then cost no descent from the root, so a
        # set nested thousands of levels deep is built in linear rather than quadratic time.
        self._trail: tuple[Path, list[FieldSet]] | None = None  # made on the first insert: most sets get none
        if paths:
            for path in paths:
                self.insert(path)

    def insert(self, path: Path) -> None:
        if not path:
            return
        self._parent_of(path).members.add(path[-1])

    def _parent_of(self, path: Path) -> FieldSet:
        """The node at path[:-1], created as needed."""
        parents = path[:-1]
        depth = len(parents)
        trail, nodes = self._trail or ((), [self])
        if depth <= len(trail) and trail[:depth] == parents:
            return nodes[depth]
        if depth <= len(trail) or parents[:len(trail)] != trail:
            trail, nodes = (), [self]
        node = nodes[-1]
        for element in parents[len(trail):]:
            node = node.descend(element)
            nodes.append(node)
        self._trail = (parents, nodes)
        return node

    def insert_at(self, cursor: PathCursor) -> None:
        """insert(cursor's path), found from the node of its parent in this set (remembered by the cursor)."""
        if cursor.parent is not None:
            cursor.parent.node_in(self).members.add(cursor.element)

    def descend(self, element: PathElement) -> FieldSet:
        child = self.children.get(element)
        if child is None:
            child = self.children[element] = FieldSet()
        return child

    def has(self, path: Path) -> bool:
        if not path:
            return False
        node: FieldSet | None = self
        for element in path[:-1]:
            node = node.children.get(element) if node is not None else None
        return node is not None and path[-1] in node.members

    def with_prefix(self, element: PathElement) -> FieldSet:
        return self.children.get(element) or FieldSet()

    def empty(self) -> bool:
        return not self.members and all(child.empty() for child in self.children.values())

    def size(self) -> int:
        return len(self.members) + sum(child.size() for child in self.children.values())

    def union(self, other: FieldSet) -> FieldSet:
        out = FieldSet()
        out.members = self.members | other.members
        out.children = dict(self.children)
        for element, child in other.children.items():
            mine = out.children.get(element)
            out.children[element] = child if mine is None else mine.union(child)
        return out

    # Intersection and differences build their result bottom-up and drop what comes out empty as they go (None),
    # so no level asks a whole subtree whether it is empty: deep sets (a custom resource nested thousands of
    # levels) stay linear.

    def intersection(self, other: FieldSet) -> FieldSet:
        return self._intersection(other) or FieldSet()

    def _intersection(self, other: FieldSet) -> FieldSet | None:
        children: dict[PathElement, FieldSet] = {}
        for element, child in self.children.items():
            theirs = other.children.get(element)
            both = child._intersection(theirs) if theirs is not None else None
            if both is not None:
                children[element] = both
        return _set_or_none(self.members & other.members, children, bool(children))

    def difference(self, other: FieldSet) -> FieldSet:
        """Members of `other` are removed only at their own level, not with what lies under them."""
        return self._difference(other, recursive=False) or FieldSet()

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Like difference, but a member of `other` also removes everything under it."""
        return self._difference(other, recursive=True) or FieldSet()

    def _difference(self, other: FieldSet, recursive: bool) -> FieldSet | None:
        children: dict[PathElement, FieldSet] = {}
        filled = False
        for element, child in self.children.items():
            if recursive and element in other.members:
                continue
            theirs = other.children.get(element)
            if theirs is None:
                children[element] = child  # kept as it is, even empty, as before
                filled = filled or not child.empty()  # each kept subtree is looked at once at most
                continue
            rest = child._difference(theirs, recursive)
            if rest is not None:
                children[element] = rest
                filled = True
        return _set_or_none(self.members - other.members, children, filled)

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Set.Iterate: this level's members in order, then each child's paths in order."""
        for element in sorted(self.members):
            yield prefix + (element,)
        for element in sorted(self.children):
            yield from self.children[element].paths(prefix + (element,))

    def map_children(self, fn: Callable[[PathElement, FieldSet], FieldSet]) -> FieldSet:
        out = FieldSet()
        out.members = set(self.members)
        out.children = {element: fn(element, child) for element, child in self.children.items()}
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.members == other.members and self.children == other.children

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_string(path) for path in self.paths()) + ")"


class PathCursor:
    """A path as a walk of an object builds it, one element a level: a cursor is its parent cursor and one
    element, where a tuple would be copied whole at every level (a walk of an object nested thousands of levels
    deep would be quadratic). It remembers its node in each set it was inserted into, so inserting the paths of
    neighbouring cursors costs no descent from the root."""

    __slots__ = ("parent", "element", "_nodes")

    def __init__(self, parent: PathCursor | None = None, element: PathElement = ()) -> None:
        self.parent, self.element = parent, element
        self._nodes: list[tuple[FieldSet, FieldSet]] = []  # (root, this path's node in it); a walk has few roots

    def child(self, element: PathElement) -> PathCursor:
        return PathCursor(self, element)

    def _known_node(self, root: FieldSet) -> FieldSet | None:
        if self.parent is None:
            return root
        for known, node in self._nodes:
            if known is root:
                return node
        return None

    def node_in(self, root: FieldSet) -> FieldSet:
        """The node at this path in root, created as needed (as insert creates its parents)."""
        unknown: list[PathCursor] = []
        cursor: PathCursor = self
        while (node := cursor._known_node(root)) is None:
            unknown.append(cursor)
            cursor = cursor.parent  # type: ignore[assignment]  # the root cursor's node is always known
        for cursor in reversed(unknown):
            node = node.descend(cursor.element)
            cursor._nodes.append((root, node))
        return node

    def path(self) -> Path:
        elements: list[PathElement] = []
        cursor: PathCursor | None = self
        while cursor is not None and cursor.parent is not None:
            elements.append(cursor.element)
            cursor = cursor.parent
        return tuple(reversed(elements))


def _set_or_none(members: set[PathElement], children: dict[PathElement, FieldSet], filled: bool) -> FieldSet | None:
    """A set of these members and children, or None when it is empty (no members, no non-empty child)."""
    if not members and not filled:
        return None
    out = FieldSet()
    out.members = members
    out.children = children
    return out
