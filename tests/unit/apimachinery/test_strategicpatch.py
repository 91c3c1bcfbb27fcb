from __future__ import annotations

import asyncio
import copy

import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.apimachinery.openapischema import SchemaSource
from kube_apiserver.apimachinery.strategicpatch import go_format, strategic_merge_patch
from kube_apiserver.endpoints.handlers.patch import patch_resource
from kube_apiserver.endpoints.handlers.scope import RequestScope
from kube_apiserver.endpoints.http import Request
from kube_apiserver.registry.rest import ResourceInfo

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)
CONFIGMAP = SOURCE.for_kind("", "v1", "ConfigMap")
DEPLOYMENT = SOURCE.for_kind("apps", "v1", "Deployment")


def containers(*items: dict) -> dict:
    return {"spec": {"template": {"spec": {"containers": list(items)}}}}


def deployment_containers(out: dict) -> list:
    return out["spec"]["template"]["spec"]["containers"]


def fails(original: dict, patch: dict, schema=DEPLOYMENT) -> StatusError:
    with pytest.raises(StatusError) as err:
        strategic_merge_patch(original, patch, schema)
    return err.value


def test_maps_merge_and_null_deletes():
    current = {"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"x": "1"}}
    out = strategic_merge_patch(current, {"metadata": {"labels": {"b": None, "c": "3"}}, "data": None}, CONFIGMAP)
    assert out == {"metadata": {"labels": {"a": "1", "c": "3"}}}
    assert current == {"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"x": "1"}}  # untouched


def test_map_directives():
    current = {"data": {"x": "1"}}
    assert strategic_merge_patch(current, {"data": {"$patch": "replace", "y": "2"}}, CONFIGMAP) == {"data": {"y": "2"}}
    assert strategic_merge_patch(current, {"data": {"$patch": "delete"}}, CONFIGMAP) == {"data": {}}
    assert strategic_merge_patch({}, {"data": {"$patch": "delete"}}, CONFIGMAP) == {}
    assert strategic_merge_patch(current, {"$patch": "replace", "binaryData": {}}, CONFIGMAP) == {"binaryData": {}}


def test_new_values_lose_nulls_and_directives():
    patch = {"metadata": {"labels": {"a": "1", "b": None}, "annotations": {"$patch": "delete"}}}
    assert strategic_merge_patch({"metadata": {}}, patch, CONFIGMAP) == {"metadata": {"labels": {"a": "1"}}}


def test_primitive_merge_list_is_an_ordered_union():
    current = {"metadata": {"finalizers": ["a", "b"]}}
    out = strategic_merge_patch(current, {"metadata": {"finalizers": ["c", "a"]}}, CONFIGMAP)
    assert out["metadata"]["finalizers"] == ["c", "a", "b"]


def test_delete_from_primitive_list_and_set_element_order():
    current = {"metadata": {"finalizers": ["a", "b", "c"]}}
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"], "$setElementOrder/finalizers": ["c", "a"]}}
    assert strategic_merge_patch(current, patch, CONFIGMAP)["metadata"]["finalizers"] == ["c", "a"]
    patch = {"metadata": {"$setElementOrder/finalizers": ["d", "b", "a"], "finalizers": ["d"]}}
    assert strategic_merge_patch(current, patch, CONFIGMAP)["metadata"]["finalizers"] == ["d", "b", "a", "c"]


def test_owner_references_merge_by_uid():
    first = {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1"}
    current = {"metadata": {"ownerReferences": [first]}}
    second = {"apiVersion": "v1", "kind": "Secret", "name": "b", "uid": "2"}
    out = strategic_merge_patch(current, {"metadata": {"ownerReferences": [second, {"uid": "1", "name": "z"}]}},
                                CONFIGMAP)
    assert out["metadata"]["ownerReferences"] == [second, dict(first, name="z")]


def test_list_of_maps_merges_by_key():
    current = containers({"name": "a", "image": "1"}, {"name": "b", "image": "1"})
    patch = containers({"name": "b", "image": "2"}, {"name": "c"}, {"name": "a", "$patch": "delete"})
    assert deployment_containers(strategic_merge_patch(current, patch, DEPLOYMENT)) == [
        {"name": "b", "image": "2"}, {"name": "c"}]


def test_list_replace_directive_and_atomic_lists():
    current = containers({"name": "a", "image": "1"}, {"name": "b", "image": "1"})
    out = strategic_merge_patch(current, containers({"name": "c"}, {"$patch": "replace"}), DEPLOYMENT)
    assert deployment_containers(out) == [{"name": "c"}]
    current = {"spec": {"template": {"spec": {"tolerations": [{"key": "a"}]}}}}
    patch = {"spec": {"template": {"spec": {"tolerations": [{"key": "b"}]}}}}
    assert strategic_merge_patch(current, patch, DEPLOYMENT) == patch


def test_set_element_order_of_a_merge_list_interleaves_server_only_items():
    # apimachinery's "add map and delete map from merging list" case, three-way.
    current = containers({"name": "1"}, {"name": "2", "image": "b"}, {"name": "4", "image": "c"})
    patch = {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "2"}, {"name": "3"}],
        "containers": [{"name": "3"}, {"name": "1", "$patch": "delete"}]}}}}
    assert deployment_containers(strategic_merge_patch(current, patch, DEPLOYMENT)) == [
        {"name": "2", "image": "b"}, {"name": "4", "image": "c"}, {"name": "3"}]


def test_retain_keys():
    current = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert strategic_merge_patch(current, patch, DEPLOYMENT) == {"spec": {"strategy": {"type": "Recreate"}}}
    err = fails(current, {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}})
    assert (err.code, err.reason, err.message) == (400, "BadRequest", "invalid patch format of retainKeys")


def test_directive_errors_are_worded_as_go():
    current = containers({"name": "a"})
    err = fails(current, containers({"name": "a", "$patch": "merge"}))
    assert (err.code, err.message) == (500, "merging lists cannot yet be specified in the patch")
    assert "reason" not in err.status()
    err = fails(current, containers({"$patch": "delete"}))
    assert err.message == "map: map[$patch:delete] does not contain declared merge key: name"
    err = fails(current, containers({"image": "x"}))
    assert err.message == "map: map[image:x] does not contain declared merge key: name"
    err = fails({"data": {"a": "b"}}, {"data": {"$patch": 5}}, CONFIGMAP)
    assert err.message == "unknown patch type: %!s(int64=5) in map: map[$patch:5]"
    err = fails({"metadata": {}}, {"metadata": {"$setElementOrder/finalizers": "x"}}, CONFIGMAP)
    assert err.message == "expected a []interface {}, but received a string"
    err = fails({"metadata": {}}, {"metadata": {"$deleteFromPrimitiveListfinalizers": ["x"]}}, CONFIGMAP)
    assert (err.code, err.message) == (400, "invalid patch format of primitive list")


def test_list_type_errors():
    err = fails({"metadata": {"finalizers": []}}, {"metadata": {"finalizers": [["a"]]}}, CONFIGMAP)
    assert (err.code, err.reason, err.message) == (422, "Invalid", "the server rejected our request due to an "
                                                                   "error in our request")
    err = fails({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": [1]}}, CONFIGMAP)
    assert err.message == "list element types are not identical: [[a] [1]]"
    err = fails({"metadata": {"finalizers": ["a"]}},
                {"metadata": {"$setElementOrder/finalizers": ["a"], "finalizers": ["b"]}}, CONFIGMAP)
    assert err.message == "The order in patch list:\n[b]\n doesn't match $setElementOrder list:\n[a]\n"


def test_unknown_fields_cannot_be_merged():
    err = fails({"metadata": {"foo": {"a": 1}}}, {"metadata": {"foo": {"b": 1}}}, CONFIGMAP)
    assert err.message == 'unable to find api field in struct ObjectMeta for the json field "foo"'
    err = fails({"spec": {"a": {}}}, {"spec": {"a": {}}}, CONFIGMAP)
    assert err.message == 'unable to find api field in struct ConfigMap for the json field "spec"'
    err = fails({"data": {"a": {}}}, {"data": {"a": {}}}, CONFIGMAP)
    assert err.message == "merging an object in json but data type is not struct, instead is: map"
    # Not in the original: taken as is (field validation reports it later).
    assert strategic_merge_patch({}, {"spec": {"a": 1}}, CONFIGMAP) == {"spec": {"a": 1}}


def test_patch_is_consumed_only_when_asked():
    patch = {"metadata": {"$setElementOrder/finalizers": ["a"], "finalizers": ["a"], "labels": {"x": None}}}
    kept = copy.deepcopy(patch)
    strategic_merge_patch({"metadata": {"finalizers": ["a"]}}, patch, CONFIGMAP)
    assert patch == kept
    strategic_merge_patch({"metadata": {"finalizers": ["a"]}}, patch, CONFIGMAP, mutate_patch=True)
    assert patch == {"metadata": {"labels": {}}}


def test_go_format():
    assert go_format({"b": [1, "x", None], "a": {"c": True, "d": 1.5}}) == "map[a:map[c:true d:1.5] b:[1 x <nil>]]"
    assert go_format(True, "s") == "%!s(bool=true)"


def test_custom_resources_answer_415_to_strategic_merge_patch():
    info = ResourceInfo("example.com", "v1", "widgets", "Widget", "widget", True)
    req = Request("PATCH", "/apis/example.com/v1/namespaces/default/widgets/w", b"",
                  {"content-type": "application/strategic-merge-patch+json"}, body=b"{}")
    with pytest.raises(StatusError) as err:
        asyncio.run(patch_resource(RequestScope(info, storage=None), req))
    assert (err.value.code, err.value.reason, err.value.message) == (
        415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types "
        "include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
