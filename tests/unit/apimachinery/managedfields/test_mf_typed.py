"""Field sets, merges and comparisons walked with the schema: list and map semantics."""

from __future__ import annotations

from typing import Any

from mf_support import schema_for

from kube_apiserver.apimachinery.managedfields.compare import compare
from kube_apiserver.apimachinery.managedfields.fieldsv1 import set_to_fields
from kube_apiserver.apimachinery.managedfields.merge import merge
from kube_apiserver.apimachinery.managedfields.schematype import of_root
from kube_apiserver.apimachinery.managedfields.typed import to_field_set
from kube_apiserver.apimachinery.managedfields.validate import render, validate

DEPLOYMENT = of_root(schema_for("apps", "v1", "Deployment"))
POD = of_root(schema_for("", "v1", "Pod"))
NO_SCHEMA = of_root(None)


def fields(obj: dict[str, Any], ref: Any = POD) -> dict[str, Any]:
    return set_to_fields(to_field_set(obj, ref))


def pod_spec(**spec: Any) -> dict[str, Any]:
    return {"spec": spec}


def test_containers_are_keyed_by_name_and_ports_by_port_and_defaulted_protocol() -> None:
    obj = pod_spec(containers=[{"name": "app", "image": "i", "ports": [{"containerPort": 80}]}])
    assert fields(obj) == {"f:spec": {"f:containers": {'k:{"name":"app"}': {
        ".": {}, "f:image": {}, "f:name": {},
        "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}}}}


def test_finalizers_are_a_set_of_values() -> None:
    obj = {"metadata": {"finalizers": ["b.io/x", "a.io/y"]}}
    assert fields(obj) == {"f:metadata": {"f:finalizers": {'v:"a.io/y"': {}, 'v:"b.io/x"': {}}}}


def test_atomic_lists_and_maps_are_single_leaves() -> None:
    obj = pod_spec(containers=[{"name": "c", "args": ["a", "b"]}])
    assert fields(obj)["f:spec"]["f:containers"]['k:{"name":"c"}']["f:args"] == {}
    dep = {"spec": {"selector": {"matchLabels": {"a": "b"}, "matchExpressions": []}}}
    assert fields(dep, DEPLOYMENT) == {"f:spec": {"f:selector": {}}}


def test_granular_maps_own_each_key() -> None:
    assert fields({"metadata": {"labels": {"a": "1", "b": "2"}}}) == {
        "f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}}


def test_without_a_schema_maps_are_granular_and_lists_atomic() -> None:
    obj = {"spec": {"size": 1, "items": [{"name": "x"}], "nested": {"a": {"b": 1}}}}
    assert fields(obj, NO_SCHEMA) == {"f:spec": {".": {}, "f:items": {}, "f:nested": {
        ".": {}, "f:a": {".": {}, "f:b": {}}}, "f:size": {}}}


def test_empty_and_null_struct_fields_are_leaves() -> None:
    assert fields(pod_spec(securityContext={}, hostname=None)) == {
        "f:spec": {"f:hostname": {}, "f:securityContext": {}}}


def test_map_list_merge_by_key_keeps_live_order_and_merges_items() -> None:
    live = pod_spec(containers=[{"name": "a", "image": "1"}, {"name": "b", "image": "1"}])
    config = pod_spec(containers=[{"name": "c", "image": "2"}, {"name": "a", "image": "2", "tty": True}])
    merged = merge(live, config, POD)
    assert merged["spec"]["containers"] == [
        {"name": "c", "image": "2"}, {"name": "a", "image": "2", "tty": True}, {"name": "b", "image": "1"}]


def test_ports_merge_by_port_and_protocol() -> None:
    live = pod_spec(containers=[{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]}])
    config = pod_spec(containers=[{"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080},
                                                          {"containerPort": 80, "protocol": "UDP"}]}])
    ports = merge(live, config, POD)["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 80, "protocol": "TCP", "name": "http", "hostPort": 8080},
                     {"containerPort": 80, "protocol": "UDP"}]


def test_set_lists_union_and_atomic_lists_replace() -> None:
    live = {"metadata": {"finalizers": ["a", "b"]},
            "spec": {"containers": [{"name": "c", "args": ["x", "y"]}]}}
    config = {"metadata": {"finalizers": ["c", "a"]}, "spec": {"containers": [{"name": "c", "args": ["z"]}]}}
    merged = merge(live, config, POD)
    assert merged["metadata"]["finalizers"] == ["c", "a", "b"]
    assert merged["spec"]["containers"][0]["args"] == ["z"]


def test_granular_maps_merge_and_atomic_maps_replace() -> None:
    live = {"metadata": {"labels": {"a": "1"}}, "spec": {"selector": {"matchLabels": {"a": "1"}}}}
    config = {"metadata": {"labels": {"b": "2"}}, "spec": {"selector": {"matchLabels": {"b": "2"}}}}
    merged = merge(live, config, DEPLOYMENT)
    assert merged["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert merged["spec"]["selector"] == {"matchLabels": {"b": "2"}}


def test_compare_reports_added_modified_removed() -> None:
    live = pod_spec(hostname="a", subdomain="s", containers=[{"name": "c", "image": "1"}])
    new = pod_spec(hostname="b", nodeName="n", containers=[{"name": "c", "image": "1"}, {"name": "d"}])
    diff = compare(live, new, POD)
    assert set_to_fields(diff.modified) == {"f:spec": {"f:hostname": {}}}
    assert set_to_fields(diff.removed) == {"f:spec": {"f:subdomain": {}}}
    assert set_to_fields(diff.added) == {"f:spec": {"f:containers": {'k:{"name":"d"}': {".": {}, "f:name": {}}},
                                                    "f:nodeName": {}}}


def test_applied_configurations_are_validated_like_structured_merge_diff() -> None:
    dup = pod_spec(containers=[{"name": "a"}, {"name": "a"}])
    assert render(validate(dup, POD, allow_duplicates=False, strict=True)) == (
        '.spec.containers: duplicate entries for key [name="a"]')
    assert validate(dup, POD, allow_duplicates=True, strict=False) == []
    unknown = {"spec": {"bogus": 1}}
    assert render(validate(unknown, POD, False, True)) == ".spec.bogus: field not declared in schema"
    keyless = pod_spec(containers=[{"image": "x"}])
    assert render(validate(keyless, POD, False, True)) == (
        '.spec.containers: element 0: associative list with keys has an element that omits all key fields '
        '["name"] (and doesn\'t have default values for any key fields)')
    assert render(validate({"spec": {"replicas": "3"}}, DEPLOYMENT, False, True)) == (
        ".spec.replicas: expected numeric (int or float), got string")
