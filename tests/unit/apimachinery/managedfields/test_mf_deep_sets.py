"""Field sets thousands of levels deep (a custom resource nested as deep as Go's decoder allows): intersection
and differences look at each node a bounded number of times, never at a whole subtree per level."""

from __future__ import annotations

from kube_apiserver.apimachinery.managedfields import fieldpath
from kube_apiserver.apimachinery.managedfields.fieldpath import FieldSet

DEPTH = 3000


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
