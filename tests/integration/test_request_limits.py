"""Bounded work from small requests (issue 9, item 3), as kube-apiserver bounds it: bodies over 3 MiB (413),
JSON patches over 10,000 operations (413) or whose copies add over 3 MiB (422), YAML with excessive aliasing
(400), objects over etcd's 1.5 MiB request limit (etcd's 500). The server keeps answering while it refuses."""

from __future__ import annotations

import json
import threading
import time

CM = "/api/v1/namespaces/default/configmaps"
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
YAML = {"Content-Type": "application/yaml"}
MERGE_PATCH = "application/merge-patch+json"

BOMB = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: limits-bomb
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


def status(code: int, reason: str, message: str) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    if reason:
        body["reason"] = reason
    return {**body, "code": code}


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def copy_doubling_patch(copies: int) -> str:
    """Each operation copies the whole data map into itself: the object doubles per operation."""
    return json.dumps([{"op": "copy", "from": "/data", "path": f"/data/c{i}"} for i in range(copies)])


def test_request_body_over_3mib_is_413_and_the_connection_closes(server):
    r = server.request("POST", CM, configmap("limits-big", a="x" * (3 * 1024 * 1024)))
    assert r.status == 413
    assert r.json() == status(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
    assert r.headers["connection"] == "close"  # the rest of the body is not read


def test_json_patch_over_10000_operations_is_413(server):
    assert server.request("POST", CM, configmap("limits-ops", a="x")).status == 201
    ops = json.dumps([{"op": "test", "path": "/data/a", "value": "x"}] * 10001)
    r = server.request("PATCH", f"{CM}/limits-ops", ops, JSON_PATCH)
    assert r.json() == status(
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    )
    ops = json.dumps([{"op": "test", "path": "/data/a", "value": "x"}] * 10000)
    assert server.request("PATCH", f"{CM}/limits-ops", ops, JSON_PATCH).status == 200


def test_json_patch_copies_are_bounded(server):
    """A 1.3 KB patch of 30 copies would grow the object to gigabytes; json-patch stops at 3 MiB of copies."""
    assert server.request("POST", CM, configmap("limits-copy", a="x" * 1000)).status == 201
    body = copy_doubling_patch(30)
    started = time.perf_counter()
    r = server.request("PATCH", f"{CM}/limits-copy", body, JSON_PATCH)
    print(f"{len(body)}-byte copy patch refused in {time.perf_counter() - started:.3f}s")
    assert r.status == 422 and r.json()["reason"] == "Invalid"
    assert "the accumulated size increase of copy is" in r.json()["message"]
    assert server.request("GET", f"{CM}/limits-copy").json()["data"] == {"a": "x" * 1000}


def test_yaml_with_excessive_aliasing_is_400(server):
    r = server.request("POST", CM, BOMB, YAML)
    assert r.json() == status(
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): "
        "yaml: document contains excessive aliasing "
        f"({BOMB[:30].hex()} ...)",
    )
    applied = server.request(
        "PATCH", f"{CM}/limits-bomb?fieldManager=test", BOMB, {"Content-Type": "application/apply-patch+yaml"}
    )
    assert applied.json() == status(
        400, "BadRequest", "error converting YAML to JSON: yaml: document contains excessive aliasing"
    )
    assert server.request("GET", f"{CM}/limits-bomb").status == 404


def test_yaml_nested_deeper_than_10000_levels_is_400(server):
    """200 KB of "[" crashed the server (PyYAML's composer recursed once per level); yaml.v2 stops at 10,000."""
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits-deep}\ndata: " + b"[" * 200_000
    r = server.request("POST", CM, body, YAML)
    assert r.json() == status(
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): yaml: line 4: exceeded max depth of "
        f"10000 ({body[:30].hex()} ...)",
    )
    assert server.request("GET", "/readyz").status == 200


def test_objects_over_etcds_request_limit(server):
    """etcd refuses a write over 1.5 MiB and kube-apiserver passes its error on (a 500 without reason)."""
    names = [f"r{i}-" + "n" * 250 for i in range(6500)]  # 1.67 MB of resourceNames
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "limits-big"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": names}],
    }
    r = server.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    assert r.json() == status(500, "", "etcdserver: request is too large")
    role["rules"][0]["resourceNames"] = names[:3000]
    created = server.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    assert created.status == 201
    role = created.json()
    role["rules"][0]["resourceNames"] = names
    updated = server.request("PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/limits-big", role)
    assert updated.json() == status(500, "", "etcdserver: request is too large")


def test_create_too_large_with_managed_fields_is_retried_without_them(server):
    """managedFields name every key again: a ConfigMap that fits only without them is stored without them."""
    data = {f"k{i:05d}-" + "k" * 193: "v" for i in range(4800)}  # 0.94 MiB of keys, twice with managedFields
    r = server.request("POST", CM, configmap("limits-managed", **data))
    assert r.status == 201, r.body[:200]
    assert "managedFields" not in r.json()["metadata"] and len(r.json()["data"]) == 4800


def test_patch_too_large_with_managed_fields_is_retried_without_them(server):
    """The same for a patch: the patched object is stored without managedFields when only they overflow."""
    assert server.request("POST", CM, configmap("limits-managed-patch", a="x")).status == 201
    data = {f"k{i:05d}-" + "k" * 193: "v" for i in range(4800)}
    r = server.request(
        "PATCH", f"{CM}/limits-managed-patch", json.dumps({"data": data}), {"Content-Type": MERGE_PATCH}
    )
    assert r.status == 200, r.body[:200]
    assert "managedFields" not in r.json()["metadata"] and len(r.json()["data"]) == 4801


def test_too_many_operations_on_a_missing_object_is_404(server):
    ops = json.dumps([{"op": "test", "path": "/data/a", "value": "x"}] * 10001)
    assert server.request("PATCH", f"{CM}/limits-missing", ops, JSON_PATCH).status == 404


def test_readyz_answers_while_bad_requests_are_refused(server):
    assert server.request("POST", CM, configmap("limits-busy", a="x" * 1000)).status == 201
    bad = [
        lambda: server.request("PATCH", f"{CM}/limits-busy", copy_doubling_patch(30), JSON_PATCH),
        lambda: server.request("POST", CM, BOMB, YAML),
        lambda: server.request("POST", CM, configmap("limits-busy-big", a="x" * (4 * 1024 * 1024))),
        lambda: server.request(
            "PATCH",
            f"{CM}/limits-busy",
            json.dumps([{"op": "test", "path": "/data", "value": {}}] * 10001),
            JSON_PATCH,
        ),
    ]
    stop = threading.Event()
    codes: list[int] = []

    def send(request) -> None:
        while not stop.is_set():
            codes.append(request().status)

    senders = [threading.Thread(target=send, args=(request,)) for request in bad]
    for sender in senders:
        sender.start()
    try:
        time.sleep(0.3)
        for _ in range(5):
            started = time.perf_counter()
            ready = server.request("GET", "/readyz")
            print(f"/readyz {ready.status} in {time.perf_counter() - started:.3f}s while refusing")
            assert ready.status == 200
    finally:
        stop.set()
        for sender in senders:
            sender.join(30)
    assert codes and set(codes) <= {400, 413, 422}, codes
