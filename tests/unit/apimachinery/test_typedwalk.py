"""The one-walk typed decoding (typedwalk) gives what the three walks it replaces give: schematypes.decode's
first error and decoded object, fieldvalidation.unknown_fields' paths (every ordering option) with the
unknown fields pruned, and the string count of the object as sent, on valid and invalid objects."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery import fieldvalidation, schematypes, typedwalk
from kube_apiserver.apimachinery.openapischema import Node, SchemaSource

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)
META = {
    "name": "x",
    "namespace": "ns",
    "labels": {"app": "web", "tier": "db"},
    "annotations": {"a.example.com/b": "c"},
    "finalizers": ["example.com/f"],
    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}],
    "managedFields": [
        {
            "manager": "m",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2024-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k": {}}},
        }
    ],
}
CONTAINER = {
    "name": "c",
    "image": "nginx",
    "ports": [{"containerPort": 80, "protocol": "TCP"}],
    "env": [{"name": "E", "value": "v"}],
    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
    "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10},
    "securityContext": {"privileged": False, "runAsUser": 1000},
}
POD_SPEC = {
    "containers": [CONTAINER],
    "restartPolicy": "Always",
    "nodeSelector": {"disk": "ssd"},
    "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}],
    "volumes": [{"name": "v", "secret": {"secretName": "s", "defaultMode": 420}}],
    "automountServiceAccountToken": False,
    "hostNetwork": False,
    "priority": 0,
}
OBJECTS = [
    (
        "",
        "v1",
        "ConfigMap",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": META,
            "data": {"k": "v", "k2": "v2"},
            "binaryData": {"b": "aGVsbG8="},
            "immutable": False,
        },
    ),
    ("", "v1", "Secret", {"metadata": META, "data": {"k": "aGVs\nbG8="}, "type": "Opaque"}),
    ("", "v1", "Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": META, "spec": POD_SPEC}),
    (
        "apps",
        "v1",
        "Deployment",
        {
            "metadata": META,
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC},
            },
        },
    ),
    (
        "",
        "v1",
        "Service",
        {
            "metadata": META,
            "spec": {
                "ports": [{"port": 80, "targetPort": 8080}],
                "externalName": "",
                "selector": {"app": "web"},
            },
        },
    ),
    ("scheduling.k8s.io", "v1", "PriorityClass", {"metadata": META, "value": 5, "globalDefault": False}),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        {
            "metadata": META,
            "spec": {
                "group": "g.example.com",
                "names": {"plural": "fs", "kind": "F"},
                "scope": "Namespaced",
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                                },
                            }
                        },
                    }
                ],
            },
        },
    ),
]
ODD_VALUES: list[Any] = [
    None,
    "",
    "s",
    0,
    1,
    1.5,
    2.0,
    1 << 40,
    True,
    False,
    [],
    [None],
    ["s", 1],
    {},
    {"x": None},
    {"unknown": 1},
    "%%%",
    "aGVsbG8=",
]


def _legacy(obj: dict[str, Any], root: Any, sort_keys: bool, map_keys: bool) -> tuple[Any, ...]:
    strings = fieldvalidation._count_strings(obj)
    wrong = schematypes.decode(obj, root)
    if wrong is not None:
        return ("error", wrong)
    unknown = fieldvalidation.unknown_fields(obj, root, sort_keys=sort_keys, map_keys=map_keys, prune=True)
    return unknown, strings, obj


def _walked(obj: dict[str, Any], root: Any, sort_keys: bool, map_keys: bool) -> tuple[Any, ...]:
    try:
        walked = typedwalk.walk(obj, root)
    except schematypes.TypeMismatch as err:
        return ("error", str(err))
    return walked.unknown_paths(sort_keys=sort_keys, map_keys=map_keys), walked.strings, obj


def _containers(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict | list):
        out.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            _containers(item, out)
    return out


def _mutate(obj: dict[str, Any], rng: random.Random) -> None:
    """A few random changes: wrong types, nulls, unknown fields, odd scalars, anywhere in the object."""
    for _ in range(rng.randint(1, 4)):
        target = rng.choice(_containers(obj, []))
        value = copy.deepcopy(rng.choice(ODD_VALUES))
        if isinstance(target, list):
            if target:
                target[rng.randrange(len(target))] = value
        elif target and rng.random() < 0.7:
            target[rng.choice(list(target))] = value
        else:
            target[rng.choice(["zz", "aa", "unknownField", "m"])] = value


@pytest.mark.parametrize(("group", "version", "kind", "obj"), OBJECTS, ids=[o[2] for o in OBJECTS])
def test_walk_equals_the_three_walks(group, version, kind, obj):
    root = SOURCE.for_kind(group, version, kind)
    rng = random.Random(kind)
    for case in range(400):
        changed = copy.deepcopy(obj)
        if case:
            _mutate(changed, rng)
        options = [(False, True), (True, True), (True, False)][case % 3]
        legacy, fused = copy.deepcopy(changed), copy.deepcopy(changed)
        assert _walked(fused, root, *options) == _legacy(legacy, root, *options), json.dumps(changed)


def test_string_count_tells_repeated_keys():
    root = SOURCE.for_kind("", "v1", "ConfigMap")
    body = b'{"metadata": {"name": "a", "name": "b"}, "data": {"k": "v", "n": null}}'
    walked = typedwalk.walk(json.loads(body), root)
    assert walked.strings != fieldvalidation.body_strings(body)
    body = b'{"metadata": {"name": "a\\"b"}, "data": {"k": "v", "n": null}, "binaryData": {"b": "aGVsbG8="}}'
    walked = typedwalk.walk(json.loads(body), root)
    assert walked.strings == fieldvalidation.body_strings(body)


def test_a_position_the_older_walks_treat_differently_leaves_the_object_as_it_was():
    """Typed decoding skips an anyOf node the unknown-field walk enters: the walk says so before it changed
    anything (nulls, omitted zero values, unknown fields seen before it), and the caller uses the older walks."""
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "object", "properties": {"c": {"type": "string"}}},
            "odd": {"anyOf": [{"type": "object"}], "properties": {"d": {"type": "string"}}},
        },
    }
    root = Node(schema, {}, "io.k8s.example.v1.Thing")
    obj = {"a": None, "b": {"c": None, "x": 1}, "y": 2, "odd": {"d": "e", "z": 3}}
    with pytest.raises(typedwalk.Unsupported):
        typedwalk.walk(obj, root)
    assert obj == {"a": None, "b": {"c": None, "x": 1}, "y": 2, "odd": {"d": "e", "z": 3}}


def test_unknown_fields_and_nulls_are_changed_once_the_walk_is_done():
    root = SOURCE.for_kind("", "v1", "ConfigMap")
    obj = {
        "metadata": {"name": "c", "creationTimestamp": None, "labels": {"a": None}, "x": {"y": 1}},
        "data": {"k": None},
        "binaryData": {"b": "aGVs\nbG8="},
        "immutable": False,
        "z": None,
    }
    walked = typedwalk.walk(obj, root)
    assert obj == {
        "metadata": {"name": "c", "labels": {"a": ""}},
        "data": {"k": ""},
        "binaryData": {"b": "aGVsbG8="},
        "immutable": False,
    }
    assert walked.unknown_paths() == ["metadata.x", "z"]


def test_a_null_struct_item_is_a_new_object_each_time():
    root = SOURCE.for_kind("", "v1", "Pod")
    first, second = {"spec": {"containers": [None]}}, {"spec": {"containers": [None]}}
    typedwalk.walk(first, root)
    typedwalk.walk(second, root)
    assert first["spec"]["containers"] == [{}]
    assert first["spec"]["containers"][0] is not second["spec"]["containers"][0]
