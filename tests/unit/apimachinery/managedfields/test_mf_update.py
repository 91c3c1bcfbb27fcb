"""Update operations (create, update, non-apply patch) through FieldManager.update."""

from __future__ import annotations

import copy
from typing import Any

from mf_support import Clock, configmaps, deployment, deployments, entries, owned, stored

from kube_apiserver.apimachinery.managedfields import FieldManager
from kube_apiserver.apimachinery.openapischema import Node


def configmap(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
            "data": dict(data)}


def test_create_records_an_update_entry() -> None:
    created = configmaps().update(None, configmap(a="1"), "kubectl-create")
    assert entries(created) == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": "2024-05-01T12:00:00Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}}]
    assert created["data"] == {"a": "1"}


def test_create_without_a_manager_name_is_unknown() -> None:
    created = configmaps().update(None, configmap(a="1"), "")
    assert entries(created)[0]["manager"] == "unknown"


def test_update_takes_changed_fields_and_drops_removed_ones_from_others() -> None:
    clock = Clock()
    fm = configmaps(clock)
    live = stored(fm.update(None, configmap(a="1", b="2"), "creator"))
    clock.tick(5)
    changed = stored(fm.update(live, configmap(a="9"), "editor"))
    assert owned(changed, "creator", "Update") == {"f:data": {}}  # still owns the map itself
    assert owned(changed, "editor", "Update") == {"f:data": {"f:a": {}}}
    assert [e["time"] for e in entries(changed)] == ["2024-05-01T12:00:00Z", "2024-05-01T12:00:05Z"]


def test_an_update_that_changes_nothing_keeps_the_entry_time() -> None:
    clock = Clock()
    fm = configmaps(clock)
    live = stored(fm.update(None, configmap(a="1"), "creator"))
    clock.tick(30)
    same = fm.update(live, copy.deepcopy(live), "creator")
    assert entries(same) == entries(live)


def test_request_managed_fields_rules() -> None:
    fm = configmaps()
    live = stored(fm.update(None, configmap(a="1"), "creator"))
    reset = copy.deepcopy(live)
    reset["metadata"]["managedFields"] = []
    assert "managedFields" not in fm.update(live, reset, "editor")["metadata"]
    # With no managed fields left on a stored object, later updates are not tracked either.
    untracked = stored(fm.update(live, reset, "editor"))
    assert "managedFields" not in fm.update(untracked, configmap(a="2"), "editor")["metadata"]
    explicit = copy.deepcopy(live)
    explicit["metadata"]["managedFields"] = [{"manager": "someone", "operation": "Apply", "apiVersion": "v1",
                                              "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]
    assert [e["manager"] for e in entries(fm.update(live, explicit, "editor"))] == ["someone"]
    invalid = copy.deepcopy(live)
    invalid["metadata"]["managedFields"] = [{"manager": "x", "operation": "Patch", "apiVersion": "v1"}]
    assert entries(fm.update(live, invalid, "creator")) == entries(live)


def test_subresource_updates_ignore_the_request_managed_fields() -> None:
    fm = deployments()
    live = stored(fm.update(None, deployment(replicas=1), "creator"))
    status = copy.deepcopy(live)
    status["metadata"]["managedFields"] = []
    status["status"] = {"replicas": 1}
    out = fm.update(live, status, "kube-controller-manager", subresource="status")
    assert [(e["manager"], e.get("subresource")) for e in entries(out)] == [
        ("creator", None), ("kube-controller-manager", "status")]
    assert owned(out, "kube-controller-manager", "Update") == {"f:status": {".": {}, "f:replicas": {}}}


def test_update_managers_are_capped_at_ten() -> None:
    clock = Clock()
    fm = configmaps(clock)
    obj = stored(fm.update(None, configmap(k0="0"), "manager-0"))
    for n in range(1, 12):
        clock.tick(10)
        new = copy.deepcopy(obj)
        new["data"][f"k{n}"] = str(n)
        obj = stored(fm.update(obj, new, f"manager-{n}"))
    managers = [e["manager"] for e in entries(obj)]
    assert len(managers) == 10
    assert managers[0] == "ancient-changes" and "manager-0" not in managers and "manager-2" not in managers
    ancient = owned(obj, "ancient-changes", "Update")
    assert ancient == {"f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}}
    assert entries(obj)[0]["time"] == "2024-05-01T12:00:20Z"


def test_apply_entries_sort_before_update_entries() -> None:
    clock = Clock()
    fm = configmaps(clock)
    live = stored(fm.update(None, configmap(a="1"), "creator"))
    clock.tick(5)
    obj = fm.apply(live, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                          "data": {"b": "2"}}, "applier", force=False)
    assert [(e["operation"], e["manager"]) for e in entries(obj)] == [("Apply", "applier"), ("Update", "creator")]


def test_create_compares_against_the_zero_struct_when_the_schema_marks_it() -> None:
    """With OpenAPI v3's `default: {}` on non-pointer structs, only pointers get a "." (as in real entries)."""
    ref = "#/components/schemas/"
    definitions = {
        "Thing": {"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {"allOf": [{"$ref": ref + "Spec"}], "default": {}}}},
        "Spec": {"type": "object", "required": ["items"], "properties": {
            "replicas": {"type": "integer"},
            "items": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "strategy": {"allOf": [{"$ref": ref + "Strategy"}], "default": {}}}},
        "Strategy": {"type": "object", "properties": {
            "type": {"type": "string"},
            "rollingUpdate": {"allOf": [{"$ref": ref + "Rolling"}]}}},
        "Rolling": {"type": "object", "properties": {"maxSurge": {"type": "integer"}}},
    }
    root = Node.of(definitions["Thing"], definitions)
    fm = FieldManager(root, "example.com/v1", clock=Clock())
    created = fm.update(None, {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
                               "spec": {"replicas": 1, "items": ["a"],
                                        "strategy": {"type": "Rolling", "rollingUpdate": {"maxSurge": 1}}}}, "me")
    assert owned(created, "me", "Update") == {"f:spec": {
        "f:items": {'v:"a"': {}}, "f:replicas": {},
        "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}}, "f:type": {}}}}
