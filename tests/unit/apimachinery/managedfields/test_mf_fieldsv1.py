"""FieldsV1 encoding and decoding, against structured-merge-diff's golden data (serialize_test.go)."""

from __future__ import annotations

import json

import pytest

from kube_apiserver.apimachinery.managedfields import fieldpath as fp
from kube_apiserver.apimachinery.managedfields.fieldsv1 import (
    FieldsV1Error,
    deserialize_element,
    fields_to_set,
    serialize_element,
    set_to_json,
)

GOLDEN = [
    r'{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},'
    r'"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},'
    r'"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}',
    r'{"f:aaa":{"k:{\"name\":\"second\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},'
    r'"f:aaf":{"k:{\"port\":443,\"protocol\":\"udp\"}":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},'
    r'"k:{\"name\":\"first\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\"name\":\"second\"}":{}}},'
    r'"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\"name\":\"first\"}":{"k:{\"name\":\"first\"}":{}}},'
    r'"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":'
    r'{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},'
    r'"i:3":{}},"k:{\"name\":\"first\"}":{"f:aad":{"f:aaf":{}}}}',
    '{"f:spec":{".":{},"f:apps":{".":{},"k:{\\"name\\":\\" app-💻\\"}":{".":{},"f:container":{".":{},'
    '"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\\"name\\":\\"port 🔑\\"}":{".":{},"f:containerPort":{},'
    '"f:name":{}}}},"f:name":{}},"k:{\\"name\\":\\" app-🚀\\"}":{".":{},"f:container":{".":{},"f:image":{},'
    '"f:name":{},"f:ports":{".":{},"k:{\\"name\\":\\"port-✅ \\"}":{".":{},"f:containerPort":{},"f:name":{}}}},'
    '"f:name":{}}}}}',
]

# A real Deployment's kubectl-client-side-apply entry (as kubectl get --show-managed-fields prints it).
DEPLOYMENT = {
    "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}},
                   "f:labels": {".": {}, "f:app": {}}},
    "f:spec": {"f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {}, "f:selector": {},
               "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
               "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                              "f:spec": {"f:containers": {'k:{"name":"nginx"}': {
                                  ".": {}, "f:image": {}, "f:name": {},
                                  "f:ports": {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': {
                                      ".": {}, "f:containerPort": {}, "f:protocol": {}}}}}}}},
}


@pytest.mark.parametrize("text", GOLDEN)
def test_golden_round_trip(text: str) -> None:
    assert set_to_json(fields_to_set(json.loads(text))) == text


def test_deployment_entry_round_trips_and_holds_its_paths() -> None:
    fields = fields_to_set(DEPLOYMENT)
    assert json.loads(set_to_json(fields)) == DEPLOYMENT
    port = fp.key([("containerPort", 80), ("protocol", "TCP")])
    container = fp.key([("name", "nginx")])
    ports = (fp.field("spec"), fp.field("template"), fp.field("spec"), fp.field("containers"), container,
             fp.field("ports"))
    assert fields.has(ports)  # the "." marker makes the list itself a member
    assert fields.has(ports + (port, fp.field("protocol")))
    assert not fields.has((fp.field("spec"),))  # f:spec has no "."


def test_non_normalized_input_is_normalized() -> None:
    text = '{"f:aad": {}, "f:aaa": {}, "k:{ \\"protocol\\":\\"udp\\",\\"port\\":443}": {}, "v: 3": {}, "i:4": {}}'
    assert set_to_json(fields_to_set(json.loads(text))) == (
        '{"f:aaa":{},"f:aad":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:3":{},"i:4":{}}')


def test_element_order_is_fields_keys_values_indexes() -> None:
    elements = [fp.index(0), fp.value(True), fp.value("a"), fp.value(2), fp.key([("name", "x")]), fp.field("z")]
    assert [serialize_element(e) for e in sorted(elements)] == [
        "f:z", 'k:{"name":"x"}', "v:2", 'v:"a"', "v:true", "i:0"]


def test_key_values_are_json_with_html_escaping() -> None:
    element = fp.key([("name", "a<b&c")])
    assert serialize_element(element) == 'k:{"name":"a\\u003cb\\u0026c"}'
    assert deserialize_element(serialize_element(element)) == element


@pytest.mark.parametrize("bad", ["f", "fx", "i:abc", "k:{", 'v:1 2'])
def test_malformed_elements_are_errors(bad: str) -> None:
    with pytest.raises(FieldsV1Error):
        fields_to_set({bad: {}})


def test_unknown_element_types_are_skipped() -> None:
    assert set_to_json(fields_to_set({"x:future": {}, "f:a": {}})) == '{"f:a":{}}'


def test_path_strings_as_conflicts_print_them() -> None:
    path = (fp.field("spec"), fp.field("containers"), fp.key([("name", "nginx")]), fp.field("ports"),
            fp.key([("protocol", "TCP"), ("containerPort", 80)]))
    assert fp.path_string(path) == '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]'
    assert fp.path_string((fp.field("metadata"), fp.field("finalizers"), fp.value("a/b"))) == (
        '.metadata.finalizers[="a/b"]')
    assert fp.path_string((fp.field("args"), fp.index(2))) == ".args[2]"


def test_set_operations() -> None:
    a = fp.FieldSet(fp.make_path("a", "b"), fp.make_path("a", "c"), fp.make_path("d"))
    b = fp.FieldSet(fp.make_path("a", "b"), fp.make_path("a"))
    assert list(a.difference(b).paths()) == [fp.make_path("d"), fp.make_path("a", "c")]
    assert list(a.recursive_difference(b).paths()) == [fp.make_path("d")]
    assert list(a.intersection(b).paths()) == [fp.make_path("a", "b")]
    assert a.union(b).has(fp.make_path("a")) and a.union(b).has(fp.make_path("a", "c"))
