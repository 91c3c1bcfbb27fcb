"""What every write derives from its kind's schema is derived once per schema node, not on every request:
the strict field check's view of each field and the empty object a create's managed fields are recorded
against. The schema is resolved (Node.of) on the first write only; later writes reuse the memoized nodes."""

from __future__ import annotations

import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery import fieldvalidation as fv
from kube_apiserver.apimachinery import openapischema
from kube_apiserver.apimachinery.managedfields.schematype import of_root
from kube_apiserver.apimachinery.managedfields.zero import zero_object
from kube_apiserver.apimachinery.openapischema import Node, SchemaSource
from kube_apiserver.apimachinery.patch import copy_json, merge_patch


def _kind(group: str, version: str, kind: str) -> Node:
    """A kind's root node of its own (a scope's), not one earlier tests have resolved already."""
    node = SchemaSource(schemas.definitions, schemas.schema_name).for_kind(group, version, kind)
    assert node is not None
    return node


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every schema resolution (Node.of) made while the test runs."""
    made: list[object] = []
    of = Node.of.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Node], schema: object, definitions: dict) -> Node | None:
        made.append(schema)
        return of(cls, schema, definitions)

    monkeypatch.setattr(openapischema.Node, "of", classmethod(counting))
    return made


def pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": {
            "containers": [
                {"name": "main", "image": "busybox", "bogus": 1, "resources": {"limits": {"cpu": "1"}}}
            ]
        },
    }


def test_the_strict_field_check_resolves_the_schema_on_the_first_object_only(
    resolutions: list[object],
) -> None:
    root = _kind("", "v1", "Pod")
    assert fv.unknown_fields(pod("a"), root) == ["spec.containers[0].bogus"]
    assert resolutions  # the first object's fields were resolved
    resolutions.clear()
    assert fv.unknown_fields(pod("b"), root) == ["spec.containers[0].bogus"]
    assert resolutions == []


def test_a_create_starts_from_an_empty_object_derived_once(resolutions: list[object]) -> None:
    struct = {"type": "object", "default": {}, "properties": {"name": {"type": "string"}}}
    schema = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "spec": {"type": "object", "default": {}, "properties": {"template": struct}},
            "items": {"type": "array", "items": {"type": "string"}},
        },
    }
    root = of_root(Node(schema, {}))
    first = zero_object(root)
    assert first == {"spec": {"template": {}}, "items": None}
    resolutions.clear()
    second = zero_object(root)
    assert resolutions == []
    assert second == first
    second["spec"]["template"]["name"] = "changed"  # each caller's own copy
    assert zero_object(root) == {"spec": {"template": {}}, "items": None}


def test_json_copies_are_deep_and_merge_patch_leaves_the_document_as_it_was() -> None:
    doc = {"a": {"b": [1, {"c": 2.5}], "d": None}, "e": "x", "n": 123456789012345678901234567890}
    copied = copy_json(doc)
    assert copied == doc and copied["a"]["b"][1] is not doc["a"]["b"][1]
    patched = merge_patch(doc, {"a": {"b": [3], "d": {"f": True}}, "e": None})
    assert patched == {"a": {"b": [3], "d": {"f": True}}, "n": 123456789012345678901234567890}
    assert doc == {"a": {"b": [1, {"c": 2.5}], "d": None}, "e": "x", "n": 123456789012345678901234567890}
