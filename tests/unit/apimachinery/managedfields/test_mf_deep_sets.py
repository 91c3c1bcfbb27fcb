"""Field sets thousands of levels deep (a custom resource nested as deep as Go's decoder allows): intersection
and differences look at each node a bounded number of times, never at a whole subtree per level."""

from __future__ import annotations

from kube_apiserver.apimachinery.managedfields import fieldpath
from kube_apiserver.apimachinery.managedfields.fieldpath import FieldSet

DEPTH = 3000
WALK_DEPTH = 1000  # the walks' objects: deep enough that a per-level whole path shows


def deep_set(leaf: str) -> FieldSet:
    path = tuple(("field", "a") for _ in range(DEPTH)) + (("field", leaf),)
    return FieldSet(path)


def test_deep_intersection_and_differences_visit_each_node_a_few_times(monkeypatch):
    calls = 0
    original = FieldSet.empty

    def counted(self: FieldSet) -> bool:
        nonlocal calls
        calls += 1
        return original(self)

    monkeypatch.setattr(fieldpath.FieldSet, "empty", counted)
    a, b = deep_set("x"), deep_set("y")
    assert a.intersection(b).empty() and a.intersection(a) == a
    assert a.difference(b) == a and a.difference(a).empty()
    assert a.recursive_difference(b) == a
    assert calls < 20 * DEPTH  # a whole-subtree check per level would be DEPTH**2 / 2


def test_inserting_every_level_of_a_deep_path_descends_once_per_level(monkeypatch):
    """A comparison inserts the path of every level of a deep object (a child's, then its parent's, or the
    reverse): each insert continues from the last one instead of descending from the root again."""
    calls = 0
    original = FieldSet.descend

    def counted(self: FieldSet, element: fieldpath.PathElement) -> FieldSet:
        nonlocal calls
        calls += 1
        return original(self, element)

    monkeypatch.setattr(fieldpath.FieldSet, "descend", counted)
    paths = [tuple(("field", "a") for _ in range(depth)) for depth in range(1, DEPTH + 1)]
    child_first, parent_first = FieldSet(*reversed(paths)), FieldSet(*paths)
    assert child_first == parent_first == FieldSet(*paths[::7], *paths[1::7], *paths[2::7], *paths[3::7],
                                                    *paths[4::7], *paths[5::7], *paths[6::7])
    assert child_first.has(paths[-1]) and child_first.size() == DEPTH
    assert calls < 20 * DEPTH  # from the root each time would be DEPTH**2 / 2


def _deep_object(depth: int, leaf: object) -> dict:
    value: dict = {"leaf": leaf}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_walks_of_a_deep_object_insert_no_whole_path_per_level(monkeypatch):
    """The field set and comparison of an object WALK_DEPTH levels deep carry each level's path as one element on its
    parent's (a cursor), not as a tuple copied whole per level and inserted from it: the path elements handed to
    FieldSet.insert stay linear in the depth, and the sets are those of inserting every path."""
    from kube_apiserver.apimachinery.managedfields.compare import compare
    from kube_apiserver.apimachinery.managedfields.schematype import of_root
    from kube_apiserver.apimachinery.managedfields.typed import to_field_set

    elements = 0
    original = FieldSet.insert

    def counted(self: FieldSet, path: fieldpath.Path) -> None:
        nonlocal elements
        elements += len(path)
        original(self, path)

    monkeypatch.setattr(fieldpath.FieldSet, "insert", counted)
    root = of_root(None)
    old, new = _deep_object(WALK_DEPTH, "x"), _deep_object(WALK_DEPTH, "y")
    fields = to_field_set(new, root)
    comparison = compare(old, new, root)
    assert elements < 20 * WALK_DEPTH  # a whole path per level would be WALK_DEPTH**2 / 2
    monkeypatch.setattr(fieldpath.FieldSet, "insert", original)
    levels = [tuple(fieldpath.field("a") for _ in range(depth)) for depth in range(1, WALK_DEPTH + 1)]
    leaf = (*levels[-1], fieldpath.field("leaf"))
    assert fields == FieldSet(*levels, leaf)  # without a schema every field is a member
    assert comparison.modified == FieldSet(leaf)
    assert comparison.added.empty() and comparison.removed.empty()
    cursor = fieldpath.PathCursor().child(fieldpath.field("a")).child(fieldpath.index(0))
    assert cursor.path() == (fieldpath.field("a"), fieldpath.index(0))
