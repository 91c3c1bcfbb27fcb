"""ObjectMeta coercion/validation of embedded resources (objectmeta/*_test.go) and list-type
uniqueness (listtype/validation_test.go)."""

from __future__ import annotations

import copy

import pytest

from kube_apiserver.apiextensions.schema import (
    MetaDecodeError,
    coerce,
    get_object_meta,
    new_structural,
    validate_list_sets_and_maps,
    validate_object_meta,
)
from kube_apiserver.apimachinery.field import Path

OBJ = {"type": "object"}
EMBEDDED = {**OBJ, "x-kubernetes-embedded-resource": True}


def _embedded_doc() -> dict:
    return {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
            "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}}


EMBEDDED_SCHEMA = new_structural({**OBJ, "properties": {
    "pruned": {**EMBEDDED, "properties": {"spec": OBJ}},
    "preserving": {**EMBEDDED, "x-kubernetes-preserve-unknown-fields": True},
    "nested": {**EMBEDDED, "properties": {"spec": {**OBJ, "properties": {
        "embedded": {**EMBEDDED, "properties": {"spec": OBJ}}}}}},
}})


def _coerce_doc() -> dict:
    doc = _embedded_doc()
    doc["pruned"], doc["preserving"], doc["nested"] = _embedded_doc(), _embedded_doc(), _embedded_doc()
    doc["nested"]["spec"]["embedded"] = _embedded_doc()
    return doc


@pytest.mark.parametrize("include_root", [False, True])
def test_coerce_embedded_resources(include_root):
    doc = _coerce_doc()
    err, unknown = coerce(None, doc, EMBEDDED_SCHEMA, include_root, return_unknown=True)
    assert err is None
    expected = ["nested.metadata.unspecified", "nested.spec.embedded.metadata.unspecified",
                "preserving.metadata.unspecified", "pruned.metadata.unspecified"]
    assert unknown == (["metadata.unspecified", *expected] if include_root else expected)
    for embedded in (doc["pruned"], doc["preserving"], doc["nested"], doc["nested"]["spec"]["embedded"]):
        assert embedded["metadata"] == {"name": "instance"}
        assert embedded["unspecified"] == "bar"  # pruning is not coercion's job
    assert doc["metadata"] == ({"name": "instance"} if include_root
                               else {"name": "instance", "unspecified": "bar"})


def test_coerce_invalid_types():
    doc = {"pruned": {"apiVersion": 42, "kind": 42, "metadata": {"name": "instance", "namespace": ["abc"],
                                                                 "labels": {"foo": 42}}}}
    schema = new_structural({**OBJ, "properties": {"pruned": {**EMBEDDED, "properties": {"spec": OBJ}}}})
    err, _ = coerce(None, copy.deepcopy(doc), schema, False)
    assert str(err) == "pruned.apiVersion: Invalid value: 42: must be a string"
    err, _ = coerce(None, doc, schema, False, drop_invalid=True)
    assert err is None and doc == {"pruned": {"metadata": {"name": "instance"}}}
    doc = {"pruned": {"apiVersion": "v1", "kind": "K", "metadata": [42]}}
    err, _ = coerce(None, doc, schema, False)
    assert str(err) == ("pruned.metadata: Invalid value: [42]: json: cannot unmarshal array into Go value of "
                        "type v1.ObjectMeta")
    err, _ = coerce(None, doc, schema, False, drop_invalid=True)
    assert err is None and doc == {"pruned": {"apiVersion": "v1", "kind": "K", "metadata": [42]}}


UNKNOWN_AND_MALFORMED = {"name": "my-meta", "unknownField": "foo", "generateName": None, "generation": None,
                         "labels": {"foo": "bar"}, "annotations": 11}
UNKNOWN_ONLY = {k: v for k, v in UNKNOWN_AND_MALFORMED.items() if k != "annotations"}
MALFORMED_ONLY = {k: v for k, v in UNKNOWN_AND_MALFORMED.items() if k != "unknownField"}
META = {"name": "my-meta", "labels": {"foo": "bar"}, "creationTimestamp": None}
ANNOTATIONS_ERROR = "json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string"


@pytest.mark.parametrize("metadata, drop, track, expected, unknown, error", [
    (UNKNOWN_AND_MALFORMED, False, False, None, [], ANNOTATIONS_ERROR),
    (UNKNOWN_AND_MALFORMED, True, False, META, [], None),
    (UNKNOWN_AND_MALFORMED, False, True, None, [], ANNOTATIONS_ERROR),
    (UNKNOWN_AND_MALFORMED, True, True, META, ["metadata.unknownField"], None),
    (UNKNOWN_ONLY, False, False, META, [], None),
    (UNKNOWN_ONLY, False, True, META, ["metadata.unknownField"], None),
    (MALFORMED_ONLY, False, True, None, [], ANNOTATIONS_ERROR),
    (MALFORMED_ONLY, True, True, META, [], None),
])
def test_get_object_meta(metadata, drop, track, expected, unknown, error):
    obj = {"kind": "Pod", "apiVersion": "v1", "metadata": metadata}
    if error:
        with pytest.raises(MetaDecodeError) as raised:
            get_object_meta(obj, drop, track)
        assert str(raised.value) == error
        return
    meta, found, paths = get_object_meta(obj, drop, track)
    assert (meta, found, paths) == (expected, True, unknown)


def test_object_meta_round_trip_normalizes():
    meta, _, unknown = get_object_meta({"metadata": {
        "name": "a", "labels": {}, "generation": 3.0, "creationTimestamp": "2024-01-02T03:04:05.123+02:00",
        "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u", "extra": 1}],
        "finalizers": [], "deletionGracePeriodSeconds": 0}}, return_unknown=True)
    assert meta == {"creationTimestamp": "2024-01-02T01:04:05Z", "deletionGracePeriodSeconds": 0, "generation": 3,
                    "name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u"}]}
    assert unknown == ["metadata.ownerReferences[0].extra"]
    with pytest.raises(MetaDecodeError, match="ObjectMeta.generation of type int64"):
        get_object_meta({"metadata": {"generation": 1.5}})
    with pytest.raises(MetaDecodeError, match='parsing time "yesterday"'):
        get_object_meta({"metadata": {"creationTimestamp": "yesterday"}})


@pytest.mark.parametrize("obj, expected", [
    ({}, ["apiVersion: Required value", "kind: Required value"]),
    ({"apiVersion": "foo/v1", "kind": "Foo"}, []),
    ({"apiVersion": "foo/v1", "kind": "foo.bar-com"}, [
        'kind: Invalid value: "foo.bar-com": may have mixed case, but should otherwise match: a DNS-1035 label must '
        "consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')"]),
    ({"apiVersion": "foo/v1", "kind": "Foo", "metadata": {"namespace": "kube-system"}}, []),
    ({"apiVersion": "", "kind": 1}, ['apiVersion: Invalid value: "": must not be empty',
                                     "kind: Invalid value: 1: must be a string"]),
    ({"apiVersion": "a/b/c", "kind": "K"}, ['apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']),
])
def test_validate_embedded_resource(obj, expected):
    assert [str(e) for e in validate_object_meta(None, obj, new_structural(EMBEDDED), False)] == expected


def test_validate_embedded_metadata():
    obj = {"e": {"apiVersion": "foo/v1", "kind": "Foo", "metadata": {
        "name": "..", "namespace": "$$$", "labels": {"#": "#"}, "annotations": {"#": "#"}}}}
    errs = validate_object_meta(None, obj, new_structural({**OBJ, "properties": {"e": EMBEDDED}}), False)
    assert [(e.field, e.type.value) for e in errs] == [
        ("e.metadata.name", "FieldValueInvalid"), ("e.metadata.namespace", "FieldValueInvalid"),
        ("e.metadata.labels", "FieldValueInvalid"), ("e.metadata.labels", "FieldValueInvalid"),
        ("e.metadata.annotations", "FieldValueInvalid")]
    assert str(errs[0]) == "e.metadata.name: Invalid value: \"..\": may not be '..'"


def _list_errs(obj: dict, schema: dict) -> list[str]:
    return [str(e) for e in validate_list_sets_and_maps(Path("root"), new_structural(schema), obj)]


def _set(items: dict | None = None) -> dict:
    return {"type": "array", "x-kubernetes-list-type": "set", **({"items": items} if items else {})}


def test_set_lists():
    assert _list_errs({"array": ["a", "a", "b", "c", "d", "c"]}, {**OBJ, "properties": {"array": _set()}}) == [
        'root.array[1]: Duplicate value: "a"', 'root.array[5]: Duplicate value: "c"']
    assert _list_errs({"array": [1, 1.0, True, 1]}, {**OBJ, "properties": {"array": _set()}}) == [
        "root.array[3]: Duplicate value: 1"]
    assert _list_errs({"m": {"k": [{"a": "b"}, {}, {"a": "b"}, {}]}},
                      {**OBJ, "properties": {"m": {**OBJ, "additionalProperties": _set(OBJ)}}}) == [
        'root.m[k][2]: Duplicate value: {"a":"b"}', "root.m[k][3]: Duplicate value: {}"]
    assert _list_errs({"l": [[None], [None, None], [None], ["a"]]}, {**OBJ, "properties": {"l": _set(_set())}}) == [
        "root.l[2]: Duplicate value: [null]", "root.l[1][1]: Duplicate value: null"]


def test_map_lists():
    one_key = {**OBJ, "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
                                         "x-kubernetes-list-map-keys": ["name"], "items": OBJ}}}
    assert _list_errs({"l": [{"name": "a"}, {"name": "b"}, {"name": "a", "x": 1}, {}, None]}, one_key) == [
        'root.l[2]: Duplicate value: {"name":"a"}', "root.l[4]: Duplicate value: {}"]
    assert _list_errs({"l": [{"name": "a"}, "x"]}, one_key) == [
        'root.l[1]: Invalid value: "x": must be an object for an array of list-type map']
    two_keys = {**OBJ, "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
                                          "x-kubernetes-list-map-keys": ["port", "protocol"], "items": OBJ}}}
    assert _list_errs({"l": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
                             {"port": 80, "protocol": "TCP", "name": "x"}]}, two_keys) == [
        'root.l[2]: Duplicate value: {"port":80,"protocol":"TCP"}']
