"""The field manager's shortcuts give what its general ways give: compare's shortcuts for maps and scalars
where the schema expects them, on random objects of several kinds (valid and not)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from mf_support import deployment, schema_for

from kube_apiserver.apimachinery.managedfields import fieldpath
from kube_apiserver.apimachinery.managedfields import managed as mf
from kube_apiserver.apimachinery.managedfields.compare import compare
from kube_apiserver.apimachinery.managedfields.fieldpath import FieldSet
from kube_apiserver.apimachinery.managedfields.fieldsv1 import (
    FieldsV1Error,
    _UnknownElementType,
    deserialize_element,
    fields_to_set,
    read_fields,
    set_to_fields,
)
from kube_apiserver.apimachinery.managedfields.schematype import DEDUCED, TypeRef
from kube_apiserver.apimachinery.managedfields.updater import VersionedSet
from kube_apiserver.apimachinery.managedfields.values import ABSENT, escaped_json_string, go_json_string
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
        assert_same(ABSENT, base, ref)  # all of it added, from the root
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


# ---- fieldsV1: an entry whose set is unchanged is written as a copy of what was read ----

ELEMENTS = [
    fieldpath.field("a"),
    fieldpath.field("b"),
    fieldpath.field("containers"),
    fieldpath.field("é<&>"),
    fieldpath.key([("name", "c")]),
    fieldpath.key([("containerPort", 80), ("protocol", "TCP")]),
    fieldpath.key([("name", "d<")]),
    fieldpath.value("x"),
    fieldpath.value(1),
    fieldpath.value(2.5),
    fieldpath.value(True),
    fieldpath.index(0),
    fieldpath.index(3),
]


def random_set(rnd: random.Random) -> FieldSet:
    paths = [tuple(rnd.choice(ELEMENTS) for _ in range(rnd.randrange(1, 4))) for _ in range(rnd.randrange(6))]
    return FieldSet(*paths)


def perturbed(raw: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    """`raw` with one random change a client could make (some change nothing _emit would write otherwise)."""
    levels = [level for level in maps_in(raw)]
    level = rnd.choice(levels)
    items = list(level.items())
    change = rnd.randrange(8)
    if change == 0:
        items.reverse()
    elif change == 1:
        items.insert(rnd.randrange(len(items) + 1), (".", rnd.choice([{}, {"f:z": {}}, None])))
    elif change == 2:
        items.append(("x:unknown", {}))
    elif change == 3 and items:
        position = rnd.randrange(len(items))
        items[position] = (items[position][0], None)
    elif change == 4:
        items.append((rnd.choice(["i:+1", "i:01", 'k:{ "name":"c"}', "v:1.0", 'k:{"name":"c"}', "i:7"]), {}))
    elif change == 5:
        items.append(("f:only-self", {".": {}}))
    elif change == 6:
        items.append(("f:a", {}))  # maybe a repeated key: replaces the value in place
    level.clear()
    level.update(items)
    return raw


def written(raw: dict[str, Any]) -> str:
    return json.dumps(raw)  # key order kept


def reference_read(raw: dict[str, Any]) -> tuple[FieldSet | None, bool]:
    """Set.FromJSON one level at a time, every level recursed into (read_fields' way before its shortcuts)."""
    children: FieldSet | None = None
    is_member = False
    for name, sub in raw.items():
        if name == ".":
            is_member = True
            continue
        try:
            element = deserialize_element(name)
        except _UnknownElementType:
            continue
        if sub is not None and not isinstance(sub, dict):
            raise FieldsV1Error("ReadMapCB: expect { or n")
        grandchildren, child_is_member = reference_read(sub or {})
        if child_is_member:
            children = children or FieldSet()
            children.members.add(element)
        if grandchildren is not None:
            children = children or FieldSet()
            children.children[element] = grandchildren
    if children is None:
        is_member = True
    return children, is_member


def test_read_fields_knows_when_the_set_is_written_back_as_it_was_read():
    rnd = random.Random("canonical")
    seen = {True: 0, False: 0}
    for _ in range(600):
        raw = set_to_fields(random_set(rnd))
        if rnd.randrange(3):
            raw = perturbed(raw, rnd)
        try:
            fields, canonical = read_fields(raw)
        except FieldsV1Error:
            continue
        assert fields == fields_to_set(raw) == (reference_read(raw)[0] or FieldSet())
        assert canonical == (written(set_to_fields(fields)) == written(raw)), raw
        seen[canonical] += 1
    assert seen[True] > 100 and seen[False] > 100, seen


def test_encode_writes_what_it_would_make_anew_and_copies_what_it_reuses():
    rnd = random.Random("reuse")
    for _ in range(300):
        entries = [
            {
                "manager": f"m{i}",
                "operation": rnd.choice(["Update", "Apply"]),
                "apiVersion": "v1",
                "time": f"2024-05-01T12:00:0{rnd.randrange(10)}Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": perturbed(set_to_fields(random_set(rnd)), rnd)
                if rnd.randrange(2)
                else set_to_fields(random_set(rnd)),
            }
            for i in range(rnd.randrange(1, 4))
        ]
        try:
            managed = mf.decode(entries)
        except mf.ManagedFieldsError:
            continue
        for ident in list(managed.fields)[: rnd.randrange(2)]:  # a changed set, or an equal new one
            owned = managed.fields[ident]
            grown = owned.fields.union(random_set(rnd))
            managed.fields[ident] = VersionedSet(grown, owned.api_version, owned.applied)
        anew = mf.Managed(managed.fields, managed.times)
        encoded = mf.encode(managed)
        assert written(encoded) == written(mf.encode(anew))
        read = [entry["fieldsV1"] for entry in entries]
        assert not any(entry["fieldsV1"] is raw for entry in encoded for raw in read)


def test_plain_strings_are_written_as_the_escaping_writes_them():
    for code in [*range(0x300), 0x2028, 0x2029, 0xFFFD, 0x1F600]:
        for text in (chr(code), f"a{chr(code)}b"):
            assert go_json_string(text) == escaped_json_string(text)


def test_member_types_are_derived_per_schema_node_not_per_name():
    """A map of arbitrary names (labels, data) keeps no memo per name written: a server's schema nodes would
    otherwise hold every key of every ConfigMap ever compared."""
    ref = schema_for("", "v1", "ConfigMap")
    data, labels = ref.child("data"), ref.child("metadata").child("labels")
    compare({}, configmap(), ref, checked=True)
    sizes = len(data._derived), len(labels._derived)
    for i in range(50):
        obj = configmap()
        obj["data"][f"key-{i}"] = "v"
        obj["metadata"]["labels"][f"label-{i}"] = "v"
        compare(configmap(), obj, ref, checked=True)
        compare({}, obj, ref, checked=True)
    assert (len(data._derived), len(labels._derived)) == sizes


def test_an_added_list_with_repeated_keys_is_checked_item_by_item():
    """Items sharing a key are not walked one by one (only their path is added), so each is validated."""
    ref = schema_for("", "v1", "Pod")
    obj = pod()
    obj["spec"]["containers"] += [
        {"name": "d", "image": "i"},
        {"name": "d", "image": "i", "env": "not-a-list"},
    ]
    for lhs in (ABSENT, zero_object(ref), {"spec": {}}):
        assert compare(lhs, obj, ref, checked=True).invalid
        assert_same(lhs, obj, ref)
