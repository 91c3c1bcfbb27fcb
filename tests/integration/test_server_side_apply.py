"""Server-side apply and managedFields over HTTP and with kubectl."""

from __future__ import annotations

import json

import pytest

CM = "/api/v1/namespaces/default/configmaps"
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def apply(server, name: str, body: str, manager: str = "tester", force: bool = False):
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return server.request("PATCH", f"{CM}/{name}{query}", body, APPLY)


def test_apply_creates_then_conflicts_then_forces(server):
    created = apply(server, "ssa-a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-a\ndata:\n  k: one\n")
    assert created.status == 201
    entry = created.json()["metadata"]["managedFields"][0]
    assert (entry["manager"], entry["operation"], entry["fieldsV1"]) == ("tester", "Apply", {"f:data": {"f:k": {}}})
    other = apply(server, "ssa-a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-a\ndata:\n  k: two\n",
                  manager="rival")
    assert other.status == 409
    assert other.json()["message"] == 'Apply failed with 1 conflict: conflict with "tester": .data.k'
    assert other.json()["details"]["causes"] == [{"reason": "FieldManagerConflict", "field": ".data.k",
                                                 "message": 'conflict with "tester"'}]
    forced = apply(server, "ssa-a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-a\ndata:\n  k: two\n",
                   manager="rival", force=True)
    assert forced.status == 200 and forced.json()["data"] == {"k": "two"}
    owners = {e["manager"] for e in forced.json()["metadata"]["managedFields"]}
    assert owners == {"rival"}  # tester lost its only field


def test_reapply_without_a_field_removes_it(server):
    apply(server, "ssa-b", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-b\ndata:\n  a: '1'\n  b: '2'\n")
    again = apply(server, "ssa-b", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-b\ndata:\n  a: '1'\n")
    assert again.json()["data"] == {"a": "1"}


def test_updates_are_recorded(server):
    r = server.request("POST", f"{CM}?fieldManager=creator", {"metadata": {"name": "ssa-c"}, "data": {"x": "1"}})
    entry = r.json()["metadata"]["managedFields"][0]
    assert (entry["manager"], entry["operation"]) == ("creator", "Update") and entry["time"].endswith("Z")
    ua = server.request("POST", CM, {"metadata": {"name": "ssa-d"}, "data": {"y": "1"}},
                        {"User-Agent": "my-operator/1.2 (linux)"})
    assert ua.json()["metadata"]["managedFields"][0]["manager"] == "my-operator"


def test_apply_option_validation(server):
    missing = server.request("PATCH", f"{CM}/ssa-x", "metadata: {}", APPLY)
    assert missing.status == 422
    assert missing.json()["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                         'is required for apply patch')
    forced = server.request("PATCH", f"{CM}/ssa-x?force=true", {}, {"Content-Type": "application/merge-patch+json"})
    assert forced.status == 422 and "force: Forbidden: may not be specified for non-apply patch" in \
        forced.json()["message"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_client_side_then_server_side_apply(server, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: moved\ndata:\n  a: '1'\n")
    server.kubectl("apply", "-f", str(manifest))
    out = server.kubectl("apply", "--server-side", "-f", str(manifest))
    assert "configmap/moved serverside-applied" in out.stdout
    obj = json.loads(server.kubectl("get", "cm", "moved", "-o", "json", "--show-managed-fields").stdout)
    managers = {(e["manager"], e["operation"]) for e in obj["metadata"]["managedFields"]}
    assert ("kubectl", "Apply") in managers and ("kubectl-client-side-apply", "Update") not in managers
    server.kubectl("patch", "cm", "moved", "--type=merge", "-p", '{"data":{"a":"2"}}', "--field-manager=other")
    conflict = server.kubectl("apply", "--server-side", "-f", str(manifest), check=False)
    assert conflict.returncode != 0 and 'conflict with "other" using v1: .data.a' in conflict.stderr
    server.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert server.kubectl("get", "cm", "moved", "-o", "jsonpath={.data.a}").stdout == "1"
