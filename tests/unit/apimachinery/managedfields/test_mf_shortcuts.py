"""The field manager's shortcuts give what its general ways give: compare's shortcuts for maps and scalars
where the schema expects them, on random objects of several kinds (valid and not)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from mf_support import deployment, schema_for

from kube_apiserver.apimachinery.managedfields.compare import compare
from kube_apiserver.apimachinery.managedfields.schematype import DEDUCED, TypeRef
from kube_apiserver.apimachinery.managedfields.zero import zero_object

NAMES = [
    "name",
    "image",
    "labels",
    "data",
    "k0",
    "containers",
    "ports",
    "containerPort",
    "protocol",
    "spec",
    "metadata",
    "replicas",
    "selector",
    "matchLabels",
    "template",
    "env",
    "value",
    "x",
    "nodeSelector",
    "tolerations",
    "key",
    "status",
    "conditions",
    "type",
    "annotations",
    "finalizers",
    "resources",
]


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "ports": [{"containerPort": 80}],
                    "env": [{"name": "E", "value": "1"}],
                }
            ],
            "tolerations": [{"key": "k"}],
            "nodeSelector": {"x": "y"},
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def configmap() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": {"app": "a"}, "finalizers": ["f"]},
        "data": {"k0": "v", "k1": "w"},
    }


KINDS: list[tuple[str, TypeRef, Any]] = [
    ("pod", schema_for("", "v1", "Pod"), pod),
    ("configmap", schema_for("", "v1", "ConfigMap"), configmap),
    ("deployment", schema_for("apps", "v1", "Deployment"), deployment),
    ("deduced", DEDUCED, pod),  # a custom resource without a schema
]


def random_value(rnd: random.Random, depth: int = 0) -> Any:
    choice = rnd.randrange(12 if depth < 3 else 7)
    if choice < 7:
        return [rnd.choice(["v", "w", ""]), rnd.randrange(3), 1.0, 2.5, True, False, None][choice]
    if choice < 9:
        return {rnd.choice(NAMES): random_value(rnd, depth + 1) for _ in range(rnd.randrange(3))}
    if choice < 11:
        return [random_value(rnd, depth + 1) for _ in range(rnd.randrange(3))]
    return [{"name": rnd.choice(["c", "d"]), "image": random_value(rnd, depth + 1)}]


def maps_in(value: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(value, dict):
        found.append(value)
        for item in value.values():
            found += maps_in(item)
    elif isinstance(value, list):
        for item in value:
            found += maps_in(item)
    return found


def mutated(obj: dict[str, Any], rnd: random.Random, changes: int) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for _ in range(changes):
        target = rnd.choice(maps_in(out))
        action = rnd.randrange(3)
        if action == 0 and target:
            del target[rnd.choice(list(target))]
        elif action == 1 and target:
            target[rnd.choice(list(target))] = random_value(rnd)
        else:
            target[rnd.choice(NAMES)] = random_value(rnd)
    return out


def assert_same(lhs: Any, rhs: Any, ref: TypeRef) -> None:
    for checked in (True, False):
        fast = compare(lhs, rhs, ref, checked=checked)
        general = compare(lhs, rhs, ref, checked=checked, shortcuts=False)
        assert (fast.added, fast.modified, fast.removed, fast.invalid) == (
            general.added,
            general.modified,
            general.removed,
            general.invalid,
        ), (lhs, rhs)


@pytest.mark.parametrize(("kind", "ref", "make"), KINDS, ids=[kind for kind, _, _ in KINDS])
def test_compare_shortcuts_equal_the_general_walk_on_random_objects(kind, ref, make):
    rnd = random.Random(f"shortcuts-{kind}")
    zero = zero_object(ref)
    for _ in range(150):
        base = mutated(make(), rnd, rnd.randrange(3))
        other = mutated(base, rnd, rnd.randrange(1, 4))
        assert_same(zero, base, ref)  # a create
        assert_same(base, other, ref)  # an update
        assert_same(other, base, ref)
        assert_same(base, copy.deepcopy(base), ref)  # an update that changes nothing


SCALARS = [1, 1.0, 0, 0.0, -0.0, True, False, "1", "", None, 2.5]


@pytest.mark.parametrize(("kind", "ref", "make"), KINDS, ids=[kind for kind, _, _ in KINDS])
def test_compare_shortcuts_tell_scalars_apart_as_smd_does(kind, ref, make):
    """1 and 1.0 are equal, true and 1 are not: each pair of scalars at a string, an integer and a map's place."""
    for left in SCALARS:
        for right in SCALARS:
            lhs, rhs = make(), make()
            for obj, scalar in ((lhs, left), (rhs, right)):
                obj["metadata"]["name"] = scalar
                obj["metadata"]["labels"] = {"a": scalar}
                obj["metadata"]["generation"] = scalar
                obj["metadata"]["ownerReferences"] = scalar  # a list's place
                obj.setdefault("spec", {})["x"] = scalar
            assert_same(lhs, rhs, ref)
