"""Pruning (pruning/algorithm_test.go) and defaulting (defaulting/algorithm_test.go, prunenulls_test.go)."""

from __future__ import annotations

import json

import pytest

from kube_apiserver.apiextensions.schema import (
    Structural,
    default,
    new_structural,
    prune,
    prune_non_nullable_nulls_without_defaults,
)

OBJ = {"type": "object"}


def s(schema: dict | None) -> Structural | None:
    return new_structural(schema)


PRUNE_CASES = [
    ("scalar", "4", {}, False, "4", []),
    ("scalar array", "[1,2]", {"items": {}}, False, "[1,2]", []),
    ("object array", '[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', {"items": {"properties": {"a": {}, "c": {}}}}, False,
     '[{"a":1},{},{"a":1,"c":3}]', ["[1].b", "[2].b"]),
    ("object array with nil schema", '[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', None, False, "[{},{},{}]",
     ["[0].a", "[1].b", "[2].a", "[2].b", "[2].c"]),
    ("object array object",
     '{"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}],"unspecified":{"a":1},"specified":{"a":1,"b":2,"c":3}}',
     {"properties": {"array": {"items": {"properties": {"a": {}, "c": {}}}},
                     "specified": {"properties": {"a": {}, "c": {}}}}}, False,
     '{"array":[{"a":1},{},{"a":1,"c":3}],"specified":{"a":1,"c":3}}',
     ["array[1].b", "array[2].b", "specified.b", "unspecified"]),
    ("additionalProperties with schema", '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}}',
     {"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}}, False,
     '{"a":1,"c":{"a":1,"b":2,"c":{}}}', ["b", "c.c.a"]),
    ("additionalProperties with bool", '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1, "apiVersion": "unknown"}}}',
     {"properties": {"a": {}, "c": {"additionalProperties": False}}}, False,
     '{"a":1,"c":{"a":1,"b":2,"c":{}}}', ["b", "c.c.a", "c.c.apiVersion"]),
]


@pytest.mark.parametrize("name, doc, schema, root, expected, pruned", PRUNE_CASES, ids=[c[0] for c in PRUNE_CASES])
def test_prune(name, doc, schema, root, expected, pruned):
    obj = json.loads(doc)
    assert prune(obj, s(schema), root) == pruned
    assert obj == json.loads(expected)


def test_prune_preserve_unknown_fields():
    obj = {
        "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": {"unspecified": "bar"},
        "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                    "pruning": {"unspecified": "bar"}, "apiVersion": "unknown", "preserving": {"unspecified": "bar"}},
        "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                       "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"},
                       "preservingUnknownType": [{"foo": True}, {"bar": True}]},
        "preservingAdditionalProperties": {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
    }
    schema = {**OBJ, "x-kubernetes-preserve-unknown-fields": True, "properties": {
        "alpha": {"type": "string"}, "beta": {"type": "number"},
        "pruning": {**OBJ, "properties": {"preserving": {**OBJ, "x-kubernetes-preserve-unknown-fields": True},
                                        "pruning": OBJ}},
        "preserving": {**OBJ, "x-kubernetes-preserve-unknown-fields": True, "properties": {
            "preserving": {**OBJ, "x-kubernetes-preserve-unknown-fields": True},
            "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": True}, "pruning": OBJ}},
        "preservingAdditionalProperties": {**OBJ, "x-kubernetes-preserve-unknown-fields": True, "additionalProperties": {
            **OBJ, "properties": {"specified": OBJ}}},
    }}
    assert prune(obj, s(schema), False) == [
        "preserving.pruning.unspecified", "preservingAdditionalProperties.foo.specified.unspecified",
        "preservingAdditionalProperties.foo.unspecified", "pruning.apiVersion", "pruning.pruning.unspecified",
        "pruning.unspecified", "pruning.unspecifiedObject"]
    assert obj["pruning"] == {"pruning": {}, "preserving": {"unspecified": "bar"}}
    assert obj["preserving"]["pruning"] == {} and obj["unspecified"] == "bar"
    assert obj["preservingAdditionalProperties"] == {"foo": {"specified": {}}}


def test_prune_embedded_resources():
    embedded = {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}}
    obj = {**json.loads(json.dumps(embedded)), "pruned": json.loads(json.dumps(embedded)),
           "preserving": json.loads(json.dumps(embedded))}
    schema = {**OBJ, "properties": {
        "metadata": OBJ,
        "pruned": {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {"spec": OBJ}},
        "preserving": {**OBJ, "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}}}
    assert prune(obj, s(schema), True) == ["pruned.spec.unspecified", "pruned.unspecified", "spec", "unspecified"]
    # metadata is left to ObjectMeta coercion; apiVersion/kind stay at the root and in embedded resources
    assert obj["metadata"] == {"name": "instance", "unspecified": "bar"}
    assert obj["pruned"] == {"apiVersion": "foo/v1", "kind": "Foo", "spec": {},
                             "metadata": {"name": "instance", "unspecified": "bar"}}
    assert obj["preserving"] == embedded


def test_prune_root_drops_unknown_meta_silently_when_not_a_resource():
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {}, "x": 1}
    assert prune(obj, s({**OBJ, "properties": {"x": {}}}), False) == []
    assert obj == {"x": 1}


DEFAULT_CASES = [
    ("scalar", "4", {"default": "foo"}, "4"),
    ("scalar array", "[1,2]", {"items": {"default": "foo"}}, "[1,2]"),
    ("object array", '[{"a":1},{"b":1},{"c":1}]',
     {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}, "c": {"default": "C"}}}},
     '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]'),
    ("object array object",
     '{"array":[{"a":1},{"b":2}],"object":{"a":1},"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
     {"properties": {
         "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
         "object": {"properties": {"a": {"default": "N"}, "b": {"default": "OBJ"}}},
         "additionalProperties": {"additionalProperties": {
             "properties": {"a": {"default": "alpha"}, "b": {"default": "beta"}}}},
         "foo": {"default": "bar"}}},
     '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"OBJ"},'
     '"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}'),
    ("empty and null", '[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
     {"items": {"properties": {"a": {"default": "A"}}}},
     '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]'),
    ("null in nullable list", "[null]", {"nullable": True, "items": {"properties": {"a": {"default": "A"}}}}, "[null]"),
    ("null in non-nullable list", "[null]", {"items": {"default": "A"}}, '["A"]'),
    ("null in nullable object", '{"a": null}', {"properties": {"a": {"nullable": True, "default": "A"}}}, '{"a": null}'),
    ("null in non-nullable object", '{"a": null}', {"properties": {"a": {"default": "A"}}}, '{"a": "A"}'),
    ("null in nullable object with additionalProperties", '{"a": null}',
     {"additionalProperties": {"nullable": True, "default": "A"}}, '{"a": null}'),
    ("null in non-nullable object with additionalProperties", '{"a": null}',
     {"additionalProperties": {"default": "A"}}, '{"a": "A"}'),
    ("null unknown field", '{"a": null}', {"additionalProperties": True}, '{"a": null}'),
]


@pytest.mark.parametrize("name, doc, schema, expected", DEFAULT_CASES, ids=[c[0] for c in DEFAULT_CASES])
def test_default(name, doc, schema, expected):
    obj = json.loads(doc)
    default(obj, s(schema))
    assert obj == json.loads(expected)
    assert json.dumps(obj, sort_keys=True) == json.dumps(json.loads(expected), sort_keys=True)  # 0 != 0.0


def test_defaults_are_copied():
    schema = s({"properties": {"a": {"default": {"x": [1]}}}})
    first, second = {}, {}
    default(first, schema)
    default(second, schema)
    first["a"]["x"].append(2)
    assert second == {"a": {"x": [1]}} and schema.properties["a"].default == {"x": [1]}


PRUNE_NULLS_CASES = [
    ("null", "null", None, "null"),
    ("scalar", "4", {}, "4"),
    ("empty object", "{}", {}, "{}"),
    ("non-nullable nulls without default", '{"a": null, "b": null, "c": null}',
     {"properties": {"a": {}, "b": {"nullable": True}, "c": {"default": "x"}}}, '{"b": null, "c": null}'),
    ("unknown fields and additionalProperties", '{"a": null, "b": {"c": null, "d": null}}',
     {"properties": {"b": {"additionalProperties": {"type": "string"}}}}, '{"a": null, "b": {}}'),
    ("in lists", '[{"a": null}, null]', {"items": {"properties": {"a": {}}}}, "[{}, null]"),
]


@pytest.mark.parametrize("name, doc, schema, expected", PRUNE_NULLS_CASES, ids=[c[0] for c in PRUNE_NULLS_CASES])
def test_prune_non_nullable_nulls_without_defaults(name, doc, schema, expected):
    obj = json.loads(doc)
    prune_non_nullable_nulls_without_defaults(obj, s(schema))
    assert obj == json.loads(expected)
