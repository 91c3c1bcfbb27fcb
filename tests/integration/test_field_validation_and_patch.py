"""fieldValidation (Strict, Warn, Ignore) on create, update and patch, and strategic merge patches, against
the real server over HTTP and with kubectl."""

from __future__ import annotations

import json

CM = "/api/v1/namespaces/default/configmaps"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
YAML = {"Content-Type": "application/yaml"}


def cm(name: str, **extra) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}, **extra}


def bad_request(message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "BadRequest", "code": 400}


def test_unknown_field_strict_is_rejected(server):
    r = server.request("POST", f"{CM}?fieldValidation=Strict", cm("fv-strict", spec={"x": 1}))
    assert r.status == 400
    assert r.json() == bad_request('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                                   'error: unknown field "spec"')
    assert server.request("GET", f"{CM}/fv-strict").status == 404


def test_unknown_field_warn_is_the_default_and_drops_the_field(server):
    body = cm("fv-warn", spec={"x": 1})
    body["metadata"]["bogus"] = "y"
    r = server.request("POST", CM, body)
    assert r.status == 201
    assert "unknown field" in r.headers["warning"]
    stored = server.request("GET", f"{CM}/fv-warn").json()
    assert "spec" not in stored and "bogus" not in stored["metadata"] and stored["data"] == {"k": "v"}
    explicit = server.request("POST", f"{CM}?fieldValidation=Warn", cm("fv-warn2", spec={"x": 1}))
    assert explicit.status == 201 and "spec" not in explicit.json()


def test_warning_header_text(server, kubectl_available):
    r = server.request("POST", CM, cm("fv-header", spec={"x": 1}))
    assert r.headers["warning"] == '299 - "unknown field \\"spec\\""'
    warned = server.kubectl("patch", "configmap", "fv-header", "--type=merge", "-p", json.dumps({"spec": 1}))
    assert 'Warning: unknown field "spec"' in warned.stderr


def test_unknown_field_ignore_is_silent(server):
    r = server.request("POST", f"{CM}?fieldValidation=Ignore", cm("fv-ignore", spec={"x": 1}))
    assert r.status == 201 and "warning" not in r.headers and "spec" not in r.json()


def test_duplicate_json_field(server):
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv-dup"},"data":{"k":"1","k":"2"}}'
    strict = server.request("POST", f"{CM}?fieldValidation=Strict", body, {"Content-Type": "application/json"})
    assert strict.status == 400
    assert strict.json()["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict '
                                        'decoding error: duplicate field "data.k"')
    warned = server.request("POST", CM, body, {"Content-Type": "application/json"})
    assert warned.status == 201 and "duplicate field" in warned.headers["warning"]
    assert warned.json()["data"] == {"k": "2"}


def test_duplicate_yaml_key_and_unknown_field(server):
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fv-yaml\n  name: fv-yaml\ndata:\n  k: v\nspec: 1\n"
    r = server.request("POST", f"{CM}?fieldValidation=Strict", body, YAML)
    assert r.status == 400
    assert r.json()["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                                   'error: yaml: unmarshal errors:\n  line 5: key "name" already set in map, '
                                   'unknown field "spec"')


def test_update_with_unknown_field(server):
    created = server.request("POST", CM, cm("fv-put")).json()
    created["spec"] = {"x": 1}
    strict = server.request("PUT", f"{CM}/fv-put?fieldValidation=Strict", created)
    assert strict.status == 400 and strict.json()["message"].endswith('strict decoding error: unknown field "spec"')
    warned = server.request("PUT", f"{CM}/fv-put", created)
    assert warned.status == 200 and "spec" not in warned.json()


def test_patch_strict_unknown_field_is_invalid(server):
    server.request("POST", CM, cm("fv-patch"))
    r = server.request("PATCH", f"{CM}/fv-patch?fieldValidation=Strict", {"spec": {"x": 1}}, SMP)
    assert r.status == 422
    body = r.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (' "" is invalid: patch: Invalid value: "map[spec:map[x:1]]": strict decoding error: '
                               'unknown field "spec"')
    assert body["details"] == {"causes": [{"reason": "FieldValueInvalid", "field": "patch", "message":
                                           'Invalid value: "map[spec:map[x:1]]": strict decoding error: '
                                           'unknown field "spec"'}]}
    merge = server.request("PATCH", f"{CM}/fv-patch?fieldValidation=Strict", {"metadata": {"bogus": 1}}, MERGE)
    assert merge.status == 422 and merge.json()["message"].endswith('unknown field "metadata.bogus"')
    warned = server.request("PATCH", f"{CM}/fv-patch", {"spec": {"x": 1}, "data": {"n": "1"}}, SMP)
    assert warned.status == 200 and "unknown field" in warned.headers["warning"]
    assert "spec" not in warned.json() and warned.json()["data"] == {"k": "v", "n": "1"}


def test_strategic_patch_merges_finalizers_and_owner_references(server):
    # Owners of kinds not served here: the garbage collector leaves such references alone.
    owner = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "owner", "uid": "uid-1"}
    body = cm("fv-smp")
    body["metadata"].update(finalizers=["example.com/a", "example.com/b"], ownerReferences=[owner])
    server.request("POST", CM, body)
    second = {"apiVersion": "example.com/v1", "kind": "Gadget", "name": "other", "uid": "uid-2"}
    patch = {"metadata": {"finalizers": ["example.com/c", "example.com/a"],
                          "ownerReferences": [second, {"uid": "uid-1", "name": "renamed"}]}}
    r = server.request("PATCH", f"{CM}/fv-smp", patch, SMP)
    assert r.status == 200, r.body
    meta = r.json()["metadata"]
    assert meta["finalizers"] == ["example.com/c", "example.com/a", "example.com/b"]
    assert meta["ownerReferences"] == [second, dict(owner, name="renamed")]
    removal = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "example.com/b"],
                            "ownerReferences": [{"uid": "uid-2", "$patch": "delete"}]}}
    meta = server.request("PATCH", f"{CM}/fv-smp", removal, SMP).json()["metadata"]
    assert meta["finalizers"] == ["example.com/c"] and meta["ownerReferences"] == [dict(owner, name="renamed")]
    meta = server.request("PATCH", f"{CM}/fv-smp", {"metadata": {"finalizers": None}}, SMP).json()["metadata"]
    assert "finalizers" not in meta


def test_strategic_patch_errors(server):
    server.request("POST", CM, cm("fv-smp-err"))
    bad = server.request("PATCH", f"{CM}/fv-smp-err", {"data": {"$patch": "frobnicate"}}, SMP)
    assert bad.status == 500
    assert bad.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": "unknown patch type: frobnicate in map: map[$patch:frobnicate]", "code": 500}
    retain = server.request("PATCH", f"{CM}/fv-smp-err", {"$retainKeys": ["data"], "metadata": {}}, SMP)
    assert retain.status == 400 and retain.json()["message"] == "invalid patch format of retainKeys"


def test_kubectl_patch_types(server, kubectl_available):
    server.kubectl("create", "configmap", "fv-kubectl", "--from-literal=a=1")
    strategic = server.kubectl("patch", "configmap", "fv-kubectl", "--type=strategic", "-p",
                               json.dumps({"data": {"b": "2"}, "metadata": {"finalizers": ["x.io/one"]}}))
    assert "patched" in strategic.stdout
    merged = server.kubectl("patch", "configmap", "fv-kubectl", "--type=merge", "-p", json.dumps({"data": {"a": None}}))
    assert "patched" in merged.stdout
    ops = [{"op": "add", "path": "/data/c", "value": "3"}, {"op": "remove", "path": "/metadata/finalizers"}]
    server.kubectl("patch", "configmap", "fv-kubectl", "--type=json", "-p", json.dumps(ops))
    got = json.loads(server.kubectl("get", "configmap", "fv-kubectl", "-o", "json").stdout)
    assert got["data"] == {"b": "2", "c": "3"} and "finalizers" not in got["metadata"]
    dropped = server.kubectl("patch", "configmap", "fv-kubectl", "--type=merge", "-p", json.dumps({"spec": 1}))
    assert "patched (no change)" in dropped.stdout
