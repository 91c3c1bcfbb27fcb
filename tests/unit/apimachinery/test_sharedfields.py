"""Objects written alike share one fieldsV1 tree, without changing how any of them serializes."""

from __future__ import annotations

import copy

import orjson

from kube_apiserver.apimachinery.sharedfields import LARGEST_SHARED, FieldsV1Sharing


def configmap(name: str, keys: list[str], time: str = "2026-11-26T16:00:00Z") -> dict:
    fields = {"f:data": {f"f:{k}": {} for k in keys}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
    entry = {
        "manager": "kubectl",
        "operation": "Update",
        "apiVersion": "v1",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "x"}, "managedFields": [entry]},
        "data": {k: "v" for k in keys},
    }


def fields_of(obj: dict) -> dict:
    return obj["metadata"]["managedFields"][0]["fieldsV1"]


def test_equal_trees_are_shared_and_objects_serialize_as_before() -> None:
    sharing = FieldsV1Sharing()
    a, b = configmap("a", ["k1", "k2"]), configmap("b", ["k1", "k2"], time="2026-11-26T16:00:01Z")
    before = [orjson.dumps(a), orjson.dumps(b)]
    sharing.share(a)
    sharing.share(b)
    assert fields_of(a) is fields_of(b)
    assert [orjson.dumps(a), orjson.dumps(b)] == before


def test_trees_in_another_key_order_or_different_are_not_shared() -> None:
    sharing = FieldsV1Sharing()
    a, reordered, other = configmap("a", ["k1", "k2"]), configmap("b", ["k2", "k1"]), configmap("c", ["k3"])
    expected = orjson.dumps(reordered)
    for obj in (a, reordered, other):
        sharing.share(obj)
    assert fields_of(a) is not fields_of(reordered)
    assert fields_of(a) is not fields_of(other)
    assert orjson.dumps(reordered) == expected  # its own order kept


def test_remembers_a_bounded_number_of_trees_and_skips_large_ones() -> None:
    sharing = FieldsV1Sharing(size=2)
    objs = [configmap(f"cm-{i}", [f"k{i}"]) for i in range(3)]
    for obj in objs:
        sharing.share(obj)
    again = [configmap("again-0", ["k0"]), configmap("again-2", ["k2"])]
    for obj in again:
        sharing.share(obj)
    assert fields_of(again[0]) is not fields_of(objs[0])  # forgotten: only the last 2 are kept
    assert fields_of(again[1]) is fields_of(objs[2])
    big_keys = [f"key-{i:05d}" for i in range(LARGEST_SHARED // 8)]
    big, big_again = configmap("big", big_keys), configmap("big2", big_keys)
    sharing.share(big)
    sharing.share(big_again)
    assert fields_of(big) is not fields_of(big_again)


def test_objects_without_managed_fields_are_left_alone() -> None:
    sharing = FieldsV1Sharing()
    odd = [
        {},
        {"metadata": None},
        {"metadata": {"managedFields": "x"}},
        {"metadata": {"managedFields": [1, {}]}},
    ]
    expected = copy.deepcopy(odd)
    for obj in odd:
        sharing.share(obj)
    assert odd == expected


def test_the_short_strings_objects_repeat_are_one_string() -> None:
    """Decoding makes a string of its own for every apiVersion, kind, namespace and managedFields name."""
    sharing = FieldsV1Sharing()
    a, b = (orjson.loads(orjson.dumps(configmap(name, ["k"]))) for name in ("a", "b"))
    assert a["kind"] is not b["kind"]  # as decoded
    sharing.share(a)
    sharing.share(b)
    for path in (("kind",), ("apiVersion",), ("metadata", "namespace")):
        x, y = a, b
        for step in path:
            x, y = x[step], y[step]
        assert x is y, path
    entries = a["metadata"]["managedFields"][0], b["metadata"]["managedFields"][0]
    for name in ("manager", "operation", "apiVersion", "fieldsType", "time"):
        assert entries[0][name] is entries[1][name], name
    assert a["metadata"]["name"] is not b["metadata"]["name"]
