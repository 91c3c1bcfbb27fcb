from __future__ import annotations

import copy
import json

import orjson
import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery import fieldvalidation as fv
from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.apimachinery.openapischema import SchemaSource

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)
CONFIGMAP = SOURCE.for_kind("", "v1", "ConfigMap")
DEPLOYMENT = SOURCE.for_kind("apps", "v1", "Deployment")


def deployment(**spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec}


def test_unknown_fields_paths():
    obj = deployment(template={"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "bogus": 1}]}},
                     zzz=1)
    obj["metadata"]["labels"] = {"any-key": "v"}
    obj["extra"] = True
    assert fv.unknown_fields(obj, DEPLOYMENT) == ["spec.template.spec.containers[1].bogus", "spec.zzz", "extra"]
    assert fv.unknown_fields(obj, DEPLOYMENT, sort_keys=True) == [
        "extra", "spec.template.spec.containers[1].bogus", "spec.zzz"]


def test_opaque_and_int_or_string_values_are_kept():
    obj = deployment(strategy={"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}})
    obj["metadata"]["managedFields"] = [{"manager": "m", "fieldsV1": {"f:data": {"f:x": {}}}}]
    obj["spec"]["template"] = {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}}
    assert fv.unknown_fields(obj, DEPLOYMENT) == []


def test_prune_drops_only_unknown_fields():
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "x": 1}, "data": {"k": "v"}, "y": 2}
    fv.prune_unknown_fields(obj, CONFIGMAP)
    assert obj == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"a":"x","b":"y"}', False),
    (b'{"a":"x","a":"y"}', True),
    (b'{"a":"say \\"hi\\"","b":["\\\\"]}', False),
    (b'{"a":{"b":1},"a":{"c":2}}', True),
])
def test_may_have_duplicates(body, expected):
    assert fv.may_have_duplicates(body, orjson.loads(body)) is expected


def test_strict_json_reports_in_document_order_and_merges_like_go():
    body = json.dumps({}).encode()[:-1] + (
        b'"metadata":{"name":"a","labels":{"x":"1"},"name":"b","labels":{"y":"2"},"bogus":1},'
        b'"data":{"k":"1","k":"2"},"spec":{"a":1}}')
    obj, found = fv.decode_strict_json(body, CONFIGMAP)
    assert obj == {"metadata": {"name": "b", "labels": {"x": "1", "y": "2"}}, "data": {"k": "2"}}
    assert found == ['duplicate field "metadata.name"', 'duplicate field "metadata.labels"',
                     'unknown field "metadata.bogus"', 'duplicate field "data.k"', 'unknown field "spec"']


def test_strict_json_structs_merge_and_lists_merge_by_index():
    body = (b'{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"}]}},'
            b'"template":{"spec":{"containers":[{"image":"y"}],"hostname":"h"}}}}')
    obj, found = fv.decode_strict_json(body, DEPLOYMENT)
    assert obj["spec"]["template"]["spec"] == {"containers": [{"name": "a", "image": "y"}], "hostname": "h"}
    assert found == ['duplicate field "spec.template"']


def test_yaml_duplicates():
    body = b"a: 1\nb:\n  c: 1\n  c: 2\na:\n  x: 1\n"
    assert fv.yaml_duplicates(body) == ('yaml: unmarshal errors:\n  line 4: key "c" already set in map\n'
                                        '  line 6: key "a" already set in map')
    assert fv.yaml_duplicates(b"1: a\n1: b\ntrue: x\nyes: y\n") == (
        "yaml: unmarshal errors:\n  line 2: key 1 already set in map\n  line 4: key true already set in map")
    assert fv.yaml_duplicates(b"a: 1\nb: 2\n") == ""


def test_apply_field_validation_directives():
    errs = ['unknown field "spec"', "yaml: unmarshal errors:\n  line 2: key \"a\" already set in map"]
    warnings: list[str] = []
    fv.apply_field_validation("Ignore", errs, warnings)
    assert warnings == []
    fv.apply_field_validation("", errs, warnings)
    fv.apply_field_validation("Warn", errs, warnings)
    assert warnings == ['unknown field "spec"', 'line 2: key "a" already set in map']
    with pytest.raises(StatusError) as err:
        fv.apply_field_validation("Strict", errs[:1] + ['duplicate field "x"'], warnings)
    assert (err.value.code, err.value.message) == (400, 'strict decoding error: unknown field "spec", '
                                                        'duplicate field "x"')


def test_check_request_object_yaml_sorts_unknown_fields():
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "zeta": 1, "alpha": 2}
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nzeta: 1\nalpha: 2\n"
    warnings: list[str] = []
    out = fv.check_request_object("Warn", body, "yaml", obj, CONFIGMAP, warnings, lambda m: StatusError(400, "BadRequest", m))
    assert warnings == ['unknown field "alpha"', 'unknown field "zeta"']
    assert out == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}


def test_patch_body_errors():
    ops = b'[{"op":"add","path":"/a","value":{"x":1,"x":2},"bogus":1}]'
    assert fv.patch_body_errors(ops, orjson.loads(ops), json_patch=True) == [
        'json patch duplicate field "[0].value.x"', 'json patch unknown field "[0].bogus"']
    merge = b'{"data":{"a":"1","a":"2"},"spec":1}'
    assert fv.patch_body_errors(merge, orjson.loads(merge), json_patch=False) == ['duplicate field "data.a"']


def test_check_patched_object_strategic_sorts_and_rejects_with_invalid():
    patched = {"metadata": {"name": "a", "zz": 1}, "aa": {"b": 1}}
    warnings: list[str] = []
    fv.check_patched_object("Warn", copy.deepcopy(patched), CONFIGMAP, True, ['duplicate field "x"'], warnings,
                            lambda m: fv.invalid_patch("v", m))
    assert warnings == ['duplicate field "x"', 'unknown field "aa"', 'unknown field "metadata.zz"']
    with pytest.raises(StatusError) as err:
        fv.check_patched_object("Strict", patched, CONFIGMAP, True, [], [],
                                lambda m: fv.invalid_patch("map[aa:1]", m))
    assert err.value.code == 422 and err.value.message == (
        ' "" is invalid: patch: Invalid value: "map[aa:1]": strict decoding error: unknown field "aa", '
        'unknown field "metadata.zz"')
    assert err.value.details == {"causes": [{"reason": "FieldValueInvalid", "message": (
        'Invalid value: "map[aa:1]": strict decoding error: unknown field "aa", unknown field "metadata.zz"'),
        "field": "patch"}]}
    fv.check_patched_object("Ignore", patched, CONFIGMAP, True, [], [], lambda m: fv.invalid_patch("", m))
    assert patched == {"metadata": {"name": "a"}}
