"""Server-side apply through FieldManager.apply: ownership, pruning, conflicts, force."""

from __future__ import annotations

import copy

import pytest
from mf_support import Clock, deployment, deployments, entries, owned, stored

from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.apimachinery.managedfields import ApplyConflict, FieldManager


def test_apply_on_create_records_an_apply_entry() -> None:
    obj = deployments().apply(None, deployment(replicas=2), "alice", force=False)
    assert obj["spec"]["replicas"] == 2
    assert entries(obj) == [{
        "manager": "alice", "operation": "Apply", "apiVersion": "apps/v1", "time": "2024-05-01T12:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {'k:{"name":"nginx"}': {".": {}, "f:image": {}, "f:name": {}}}}}}}}]


def test_reapply_without_a_field_removes_it() -> None:
    fm = deployments()
    first = stored(fm.apply(None, deployment(replicas=2, paused=True), "alice", force=False))
    second = fm.apply(first, deployment(replicas=2), "alice", force=False)
    assert "paused" not in second["spec"]
    assert "f:paused" not in owned(second, "alice")["f:spec"]


def test_reapply_keeps_a_field_another_manager_also_owns() -> None:
    fm = deployments()
    first = stored(fm.apply(None, deployment(replicas=2), "alice", force=False))
    shared = stored(fm.apply(first, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                                     "spec": {"replicas": 2}}, "bob", force=False))
    after = fm.apply(shared, deployment(), "alice", force=False)
    assert after["spec"]["replicas"] == 2
    assert owned(after, "bob") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owned(after, "alice")["f:spec"]


def test_two_appliers_share_a_field_when_values_agree() -> None:
    fm = deployments()
    first = stored(fm.apply(None, deployment(replicas=2), "alice", force=False))
    both = fm.apply(first, deployment(replicas=2), "bob", force=False)
    assert owned(both, "alice") == owned(both, "bob")
    # Nothing changed, so Kubernetes records bob without a time (and sorts him first).
    assert [(e["manager"], "time" in e) for e in entries(both)] == [("bob", False), ("alice", True)]


def test_conflict_on_a_differing_value_has_the_exact_status() -> None:
    fm = deployments()
    live = stored(fm.update(None, deployment(replicas=2), "kube-controller-manager"))
    with pytest.raises(ApplyConflict) as caught:
        fm.apply(live, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                        "spec": {"replicas": 3}}, "mgr", force=False)
    assert caught.value.conflicts == [("kube-controller-manager", "apps/v1", ".spec.replicas")]
    status = caught.value.status_error("Deployment", "apps", "web").status()
    assert status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: '
                   ".spec.replicas",
        "reason": "Conflict",
        "details": {"causes": [{"reason": "FieldManagerConflict",
                                "message": 'conflict with "kube-controller-manager" using apps/v1',
                                "field": ".spec.replicas"}]},
        "code": 409}


def test_several_conflicts_are_grouped_by_manager() -> None:
    fm = deployments()
    live = stored(fm.apply(None, deployment(replicas=2, paused=False), "alice", force=False))
    config = deployment(replicas=3, paused=True)
    with pytest.raises(ApplyConflict) as caught:
        fm.apply(live, config, "bob", force=False)
    assert str(caught.value) == ('Apply failed with 2 conflicts: conflicts with "alice":\n'
                                 "- .spec.paused\n- .spec.replicas")


def test_force_takes_ownership() -> None:
    fm = deployments()
    live = stored(fm.apply(None, deployment(replicas=2), "alice", force=False))
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 5}}
    forced = fm.apply(live, config, "bob", force=True)
    assert forced["spec"]["replicas"] == 5
    assert owned(forced, "bob") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owned(forced, "alice")["f:spec"]


def test_update_after_apply_takes_ownership_silently() -> None:
    clock = Clock()
    fm = deployments(clock)
    live = stored(fm.apply(None, deployment(replicas=2), "alice", force=False))
    changed = copy.deepcopy(live)
    changed["spec"]["replicas"] = 7
    clock.tick(60)
    updated = stored(fm.update(live, changed, "kubectl-scale"))
    assert owned(updated, "kubectl-scale", "Update") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owned(updated, "alice")["f:spec"]
    # alice now conflicts with the scaler when she applies her old value.
    with pytest.raises(ApplyConflict, match='conflict with "kubectl-scale" using apps/v1: .spec.replicas'):
        fm.apply(updated, deployment(replicas=2), "alice", force=False)


def test_map_list_items_owned_by_others_survive_a_reapply() -> None:
    fm = deployments()
    two = deployment()
    two["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "envoy"})
    live = stored(fm.apply(None, two, "alice", force=False))
    sidecar_only = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                    "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy"}]}}}}
    live = stored(fm.apply(live, sidecar_only, "bob", force=False))
    after = fm.apply(live, deployment(), "alice", force=False)
    names = [c["name"] for c in after["spec"]["template"]["spec"]["containers"]]
    assert names == ["nginx", "sidecar"]
    gone = fm.apply(stored(after), sidecar_only | {"spec": {"template": {"spec": {"containers": []}}}}, "bob", False)
    assert [c["name"] for c in gone["spec"]["template"]["spec"]["containers"]] == ["nginx"]


def test_noop_apply_returns_the_live_object() -> None:
    fm = deployments()
    live = stored(fm.apply(None, deployment(replicas=2), "alice", force=False))
    again = fm.apply(live, deployment(replicas=2), "alice", force=False)
    assert again == live


def test_apply_to_an_object_without_managed_fields_credits_before_first_apply() -> None:
    live = stored(deployment(replicas=2, paused=True))
    obj = deployments().apply(live, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                                     "spec": {"paused": True}}, "alice", force=False)
    assert [(e["manager"], e["operation"]) for e in entries(obj)] == [
        ("alice", "Apply"), ("before-first-apply", "Update")]
    assert "f:replicas" in owned(obj, "before-first-apply", "Update")["f:spec"]


def test_bad_configurations_are_rejected_as_kubernetes_does() -> None:
    fm = deployments()
    with pytest.raises(StatusError) as wrong_kind:
        fm.apply(None, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}, "a", False)
    assert (wrong_kind.value.code, wrong_kind.value.message) == (400, "invalid object type: /v1, Kind=Pod")
    with_fields = deployment()
    with_fields["metadata"]["managedFields"] = []
    with pytest.raises(StatusError, match="^metadata.managedFields must be nil$"):
        fm.apply(None, with_fields, "a", False)
    dup = deployment()
    dup["spec"]["template"]["spec"]["containers"] *= 2
    with pytest.raises(StatusError) as typed:
        fm.apply(None, dup, "a", False)
    assert (typed.value.code, typed.value.reason) == (500, "")
    assert typed.value.message == (
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): "
        '.spec.template.spec.containers: duplicate entries for key [name="nginx"]')


def test_reset_fields_are_never_owned() -> None:
    fm = deployments(reset_fields=[("status",)])
    config = deployment() | {"status": {"replicas": 3}}
    obj = fm.apply(None, config, "alice", force=False)
    assert "f:status" not in owned(obj, "alice")


def test_finalizers_are_owned_per_value() -> None:
    fm = deployments()
    base = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    live = stored(fm.apply(None, base | {"metadata": {"name": "web", "finalizers": ["a.io/x"]}}, "alice", False))
    live = stored(fm.apply(live, base | {"metadata": {"name": "web", "finalizers": ["b.io/y"]}}, "bob", False))
    assert live["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert owned(live, "bob") == {"f:metadata": {"f:finalizers": {'v:"b.io/y"': {}}}}
    after = fm.apply(live, base, "alice", False)
    assert after["metadata"]["finalizers"] == ["b.io/y"]


def test_atomic_lists_are_replaced_and_conflict_as_a_whole() -> None:
    fm = deployments()
    with_args = deployment()
    with_args["spec"]["template"]["spec"]["containers"][0]["args"] = ["--a", "--b"]
    live = stored(fm.apply(None, with_args, "alice", False))
    other = copy.deepcopy(with_args)
    other["spec"]["template"]["spec"]["containers"][0]["args"] = ["--c"]
    with pytest.raises(ApplyConflict, match=r'\.spec\.template\.spec\.containers\[name="nginx"\]\.args$'):
        fm.apply(live, other, "bob", False)
    replaced = fm.apply(live, other, "alice", False)
    assert replaced["spec"]["template"]["spec"]["containers"][0]["args"] == ["--c"]


def test_custom_resources_without_a_schema_are_deduced() -> None:
    fm = FieldManager(None, "example.com/v1", kind="Widget", clock=Clock())
    config = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
              "spec": {"size": 1, "tags": ["a"], "labels": {"x": "y"}}}
    obj = fm.apply(None, config, "alice", False)
    assert owned(obj, "alice") == {"f:spec": {".": {}, "f:labels": {".": {}, "f:x": {}}, "f:size": {},
                                              "f:tags": {}}}
    live = stored(obj)
    merged = fm.apply(live, {**config, "spec": {"tags": ["b"], "labels": {"z": "w"}}}, "bob", True)
    assert merged["spec"] == {"size": 1, "tags": ["b"], "labels": {"x": "y", "z": "w"}}
