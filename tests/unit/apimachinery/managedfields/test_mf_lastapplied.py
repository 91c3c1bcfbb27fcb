"""kubectl apply (client-side) followed by kubectl apply --server-side: the last-applied transition."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mf_support import Clock, deployment, deployments, entries, owned, stored

from kube_apiserver.apimachinery.managedfields import ApplyConflict, FieldManager

ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"


def client_side_create(fm: FieldManager, manifest: dict[str, Any]) -> dict[str, Any]:
    """What `kubectl apply` (client-side) POSTs: the manifest plus its last-applied annotation."""
    body = copy.deepcopy(manifest)
    body["metadata"]["annotations"] = {ANNOTATION: json.dumps(manifest, separators=(",", ":")) + "\n"}
    return stored(fm.update(None, body, "kubectl-client-side-apply"))


def test_server_side_apply_after_client_side_apply_moves_ownership_without_conflicts() -> None:
    clock = Clock()
    fm = deployments(clock)
    live = client_side_create(fm, deployment(replicas=2))
    clock.tick(60)
    manifest = deployment(replicas=3)
    obj = fm.apply(live, manifest, "kubectl", force=False)
    assert obj["spec"]["replicas"] == 3
    assert owned(obj, "kubectl")["f:spec"]["f:replicas"] == {}
    assert "f:replicas" not in owned(obj, "kubectl-client-side-apply", "Update")["f:spec"]
    # Unchanged fields stay shared with the client-side manager.
    assert "f:selector" in owned(obj, "kubectl-client-side-apply", "Update")["f:spec"]
    # The annotation now records the server-side applied manifest (Go's encoding: sorted keys, newline).
    recorded = obj["metadata"]["annotations"][ANNOTATION]
    assert recorded.endswith("}\n") and json.loads(recorded) == manifest
    assert recorded.startswith('{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",')


def test_fields_changed_since_the_last_client_side_apply_still_conflict() -> None:
    clock = Clock()
    fm = deployments(clock)
    live = client_side_create(fm, deployment(replicas=2))
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    clock.tick(10)
    live = stored(fm.update(live, scaled, "kubectl-scale"))
    with pytest.raises(ApplyConflict) as caught:
        fm.apply(live, deployment(replicas=3), "kubectl", force=False)
    assert caught.value.conflicts == [("kubectl-scale", "apps/v1", ".spec.replicas")]


def test_only_the_kubectl_manager_gets_the_transition() -> None:
    fm = deployments()
    live = client_side_create(fm, deployment(replicas=2))
    with pytest.raises(ApplyConflict) as caught:
        fm.apply(live, deployment(replicas=3), "my-tool", force=False)
    assert caught.value.conflicts == [("kubectl-client-side-apply", "apps/v1", ".spec.replicas")]
    assert [e["manager"] for e in entries(live)] == ["kubectl-client-side-apply"]


def test_without_the_annotation_nothing_is_rewritten() -> None:
    fm = deployments()
    live = stored(fm.apply(None, deployment(replicas=2), "kubectl", force=False))
    obj = fm.apply(live, deployment(replicas=4), "kubectl", force=False)
    assert "annotations" not in obj["metadata"]
