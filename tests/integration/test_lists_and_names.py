"""Lists and names as kube-apiserver answers them: a metadata.name field selector on a list or watch across
namespaces selects (it names no object's path), and a name given with generateName is the object's name,
never replaced by a generated one."""

from __future__ import annotations

import json

CONFIGMAPS = "/api/v1/configmaps"


def ensure_namespace(server, name: str) -> None:
    answer = server.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert answer.status in (201, 409), answer.body


def create(server, namespace: str, name: str) -> None:
    answer = server.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": name}})
    assert answer.status == 201, answer.body


def test_cluster_wide_list_by_name_selects_across_namespaces(server):
    for namespace in ("names-a", "names-b"):
        ensure_namespace(server, namespace)
        create(server, namespace, "same-name")
    create(server, "names-a", "other-name")
    for selector in ("metadata.name=same-name", "metadata.name==same-name"):
        listed = server.request("GET", f"{CONFIGMAPS}?fieldSelector={selector}")
        assert listed.status == 200, listed.body
        items = listed.json()["items"]
        assert sorted((i["metadata"]["namespace"], i["metadata"]["name"]) for i in items) == [
            ("names-a", "same-name"), ("names-b", "same-name")]
    none = server.request("GET", f"{CONFIGMAPS}?fieldSelector=metadata.name=no-such-name")
    assert none.status == 200 and none.json()["items"] == [] and none.json()["kind"] == "ConfigMapList"
    scoped = server.request("GET", "/api/v1/namespaces/names-b/configmaps?fieldSelector=metadata.name=same-name")
    assert [i["metadata"]["namespace"] for i in scoped.json()["items"]] == ["names-b"]


def test_cluster_wide_watch_by_name_selects_across_namespaces(server):
    for namespace in ("watch-names-a", "watch-names-b"):
        ensure_namespace(server, namespace)
        create(server, namespace, "watched")
    streamed = server.request("GET", f"{CONFIGMAPS}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dwatched")
    assert streamed.status == 200, streamed.body
    events = [json.loads(line) for line in streamed.body.splitlines() if line.strip()]
    assert sorted((e["type"], e["object"]["metadata"]["namespace"]) for e in events) == [
        ("ADDED", "watch-names-a"), ("ADDED", "watch-names-b")]
    old_path = server.request("GET", "/api/v1/watch/configmaps?timeoutSeconds=1&fieldSelector=metadata.name%3Dwatched")
    assert old_path.status == 200 and len(old_path.body.splitlines()) == 2


def test_a_given_name_is_never_replaced_by_a_generated_one(server):
    path = "/api/v1/namespaces/default/configmaps"
    body = {"metadata": {"name": "fixed-abcde", "generateName": "fixed-"}}
    first = server.request("POST", path, body)
    assert first.status == 201 and first.json()["metadata"]["name"] == "fixed-abcde"
    again = server.request("POST", path, body)
    assert again.status == 409, again.body
    assert again.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "fixed-abcde" already exists', "reason": "AlreadyExists",
        "details": {"name": "fixed-abcde", "kind": "configmaps"}, "code": 409}
    generated = server.request("POST", path, {"metadata": {"generateName": "fixed-"}})
    assert generated.status == 201 and generated.json()["metadata"]["name"].startswith("fixed-")
    listed = server.request("GET", f"{path}?labelSelector=").json()["items"]
    assert sum(i["metadata"]["name"].startswith("fixed-") for i in listed) == 2


def test_a_watch_path_naming_an_object_watches_that_object(server):
    ensure_namespace(server, "watch-one")
    for name in ("one", "another"):
        create(server, "watch-one", name)
    base = "/api/v1/watch/namespaces/watch-one/configmaps"
    streamed = server.request("GET", f"{base}/one?timeoutSeconds=1")
    assert streamed.status == 200, streamed.body
    events = [json.loads(line) for line in streamed.body.splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "one")]
    same = server.request("GET", f"{base}/one?timeoutSeconds=1&fieldSelector=metadata.name%3Done")
    assert same.status == 200 and len(same.body.splitlines()) == 1
    other = server.request("GET", f"{base}/one?timeoutSeconds=1&fieldSelector=metadata.name%3Danother")
    assert other.status == 400
    assert other.json()["message"] == "fieldSelector metadata.name doesn't match requested name"


def test_a_generated_name_that_exists_is_generated_again(server, monkeypatch):
    """createWithGenerateNameRetry, for the generic Store and for Services (whose name is generated before
    their IPs are allocated): the generator is made to collide once."""
    from kube_apiserver.api.core.service import store as service_store
    from kube_apiserver.registry import store, strategy

    path = "/api/v1/namespaces/default"
    assert server.request("POST", f"{path}/configmaps", {"metadata": {"name": "gen-taken"}}).status == 201
    service = {"spec": {"ports": [{"port": 80}]}}
    assert server.request("POST", f"{path}/services", {**service, "metadata": {"name": "gen-taken"}}).status == 201
    for collection in ("configmaps", "services"):
        names = iter(["gen-taken", f"gen-{collection}"])
        for module in (store, strategy, service_store):
            monkeypatch.setattr(module, "generate_name", lambda prefix, namespace="", names=names: next(names))
        body = {**(service if collection == "services" else {}), "metadata": {"generateName": "gen-"}}
        created = server.request("POST", f"{path}/{collection}", body)
        assert created.status == 201, created.body
        assert created.json()["metadata"]["name"] == f"gen-{collection}"
    ips = server.request("GET", "/apis/networking.k8s.io/v1/ipaddresses").json()["items"]
    owners = {i["spec"]["parentRef"]["name"] for i in ips if i["spec"]["parentRef"]["namespace"] == "default"}
    assert {"gen-taken", "gen-services"} <= owners
