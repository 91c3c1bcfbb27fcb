"""Raw HTTP against the server: status codes, Status bodies, content types, discovery, health."""

from __future__ import annotations

import json
import time

import yaml

from conftest import Server

# kube-apiserver v1.34's /apis: the aggregator's group, then by APIService priority.
APIS_ORDER = ["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
              "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy",
              "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
              "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
              "flowcontrol.apiserver.k8s.io"]

CM = "/api/v1/namespaces/default/configmaps"


def cm(name: str, **extra) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **extra}, "data": {"k": "v"}}


def status(code: int, reason: str, message: str, details: dict | None = None) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason}
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def test_not_found(server):
    r = server.request("GET", f"{CM}/nope")
    assert r.status == 404
    assert r.json() == status(404, "NotFound", 'configmaps "nope" not found', {"name": "nope", "kind": "configmaps"})


def test_create_sets_server_fields_and_already_exists(server):
    r = server.request("POST", CM, cm("dup"))
    assert r.status == 201
    meta = r.json()["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z") and int(meta["resourceVersion"]) > 0
    assert "generation" not in meta
    again = server.request("POST", CM, cm("dup"))
    assert again.status == 409
    assert again.json() == status(409, "AlreadyExists", 'configmaps "dup" already exists',
                                  {"name": "dup", "kind": "configmaps"})


def test_update_with_stale_resource_version_conflicts(server):
    created = server.request("POST", CM, cm("conflicted")).json()
    fresh = dict(created, data={"k": "new"})
    assert server.request("PUT", f"{CM}/conflicted", fresh).status == 200
    stale = server.request("PUT", f"{CM}/conflicted", dict(created, data={"k": "stale"}))
    assert stale.status == 409
    assert stale.json() == status(409, "Conflict", 'Operation cannot be fulfilled on configmaps "conflicted": the '
                                  'object has been modified; please apply your changes to the latest version and '
                                  'try again', {"name": "conflicted", "kind": "configmaps"})
    unconditional = dict(created, data={"k": "forced"})
    del unconditional["metadata"]["resourceVersion"]
    assert server.request("PUT", f"{CM}/conflicted", unconditional).json()["data"] == {"k": "forced"}


def test_invalid_name_has_field_causes(server):
    r = server.request("POST", CM, cm("Bad_Name"))
    assert r.status == 422
    body = r.json()
    detail = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
              "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    assert body["reason"] == "Invalid"
    assert body["message"] == f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {detail}'
    assert body["details"] == {"name": "Bad_Name", "kind": "ConfigMap", "causes": [
        {"reason": "FieldValueInvalid", "message": f'Invalid value: "Bad_Name": {detail}', "field": "metadata.name"}]}


def test_missing_name(server):
    r = server.request("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    assert r.status == 422
    assert r.json()["details"]["causes"] == [{"reason": "FieldValueRequired", "field": "metadata.name",
                                             "message": "Required value: name or generateName is required"}]


def test_generate_name(server):
    r = server.request("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}})
    assert r.status == 201
    name = r.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == len("gen-") + 5


def test_bad_requests(server):
    assert server.request("POST", CM, b"{not json", {"Content-Type": "application/json"}).status == 400
    wrong_kind = server.request("POST", CM, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})
    assert wrong_kind.status == 400 and wrong_kind.json()["reason"] == "BadRequest"
    other_ns = server.request("POST", CM, cm("x", namespace="kube-system"))
    assert other_ns.json() == status(400, "BadRequest", "the namespace of the provided object does not match the "
                                     "namespace sent on the request")
    renamed = server.request("PUT", f"{CM}/a", cm("b"))
    assert renamed.json()["message"] == "the name of the object (b) does not match the name on the URL (a)"


def test_method_and_media_type_errors(server):
    assert server.request("POST", f"{CM}/x", cm("x")).json()["reason"] == "MethodNotAllowed"
    r = server.request("POST", CM, b"x", {"Content-Type": "text/plain"})
    assert r.status == 415 and r.json()["reason"] == "UnsupportedMediaType"
    r = server.request("GET", CM, headers={"Accept": "text/html"})
    assert r.status == 406 and r.json()["reason"] == "NotAcceptable"
    r = server.request("PATCH", f"{CM}/x", b"{}", {"Content-Type": "application/json"})
    assert r.status == 415


def test_yaml_in_and_out(server):
    body = yaml.safe_dump(cm("from-yaml"))
    r = server.request("POST", CM, body, {"Content-Type": "application/yaml", "Accept": "application/yaml"})
    assert r.status == 201 and r.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(r.body)["metadata"]["name"] == "from-yaml"


def test_authentication(server):
    assert server.request("GET", CM, token=None).json() == status(401, "Unauthorized", "Unauthorized")
    assert server.request("GET", CM, token="wrong").status == 401
    for path in ("/healthz", "/livez", "/readyz", "/version"):
        assert server.request("GET", path, token=None).status == 200, path
    assert server.request("GET", "/api", token=None).status == 401


def test_namespace_lifecycle(tmp_path):
    """Without the namespace controller: the API alone (Terminating, refusals, /finalize)."""
    server = Server(str(tmp_path), ["--controllers=*,-namespace"]).start()
    try:
        namespace_lifecycle(server)
    finally:
        server.stop()


def namespace_lifecycle(server):
    missing = server.request("POST", "/api/v1/namespaces/nowhere/configmaps", cm("x"))
    assert missing.status == 404
    assert missing.json()["details"] == {"name": "nowhere", "kind": "namespaces"}
    assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "doomed"}}).status == 201
    assert server.request("POST", "/api/v1/namespaces/doomed/configmaps", cm("inside")).status == 201
    deleted = server.request("DELETE", "/api/v1/namespaces/doomed")
    assert deleted.status == 200 and deleted.json()["status"]["phase"] == "Terminating"
    refused = server.request("POST", "/api/v1/namespaces/doomed/configmaps", cm("late"))
    assert refused.status == 403
    assert refused.json()["message"] == ('configmaps "late" is forbidden: unable to create new content in namespace '
                                         'doomed because it is being terminated')
    assert refused.json()["details"]["causes"] == [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                                    "message": "namespace doomed is being terminated"}]
    assert server.request("DELETE", "/api/v1/namespaces/doomed/configmaps/inside").status == 200
    ns = server.request("GET", "/api/v1/namespaces/doomed").json()
    ns["spec"]["finalizers"] = []
    assert server.request("PUT", "/api/v1/namespaces/doomed/finalize", ns).status == 200
    assert server.request("GET", "/api/v1/namespaces/doomed").status == 404
    immortal = server.request("DELETE", "/api/v1/namespaces/default")
    assert immortal.status == 403 and "this namespace may not be deleted" in immortal.json()["message"]


def test_list_paging_and_selectors(server):
    for i in range(5):
        server.request("POST", CM, cm(f"page-{i}", labels={"set": "paged", "i": str(i)}))
    first = server.request("GET", f"{CM}?labelSelector=set%3Dpaged&limit=2").json()
    assert [i["metadata"]["name"] for i in first["items"]] == ["page-0", "page-1"]
    token = first["metadata"]["continue"]
    second = server.request("GET", f"{CM}?labelSelector=set%3Dpaged&limit=2&continue={token}").json()
    assert [i["metadata"]["name"] for i in second["items"]] == ["page-2", "page-3"]
    notin = server.request("GET", f"{CM}?labelSelector=set%3Dpaged,i+notin+(0,1)").json()
    assert len(notin["items"]) == 3
    by_name = server.request("GET", f"{CM}?fieldSelector=metadata.name%3Dpage-4").json()
    assert [i["metadata"]["name"] for i in by_name["items"]] == ["page-4"]
    bad = server.request("GET", f"{CM}?fieldSelector=spec.nope%3D1")
    assert bad.status == 400 and bad.json()["message"] == "field label not supported: spec.nope"
    gone = server.request("DELETE", f"{CM}?labelSelector=set%3Dpaged")
    assert gone.status == 200 and len(gone.json()["items"]) == 5
    assert server.request("GET", f"{CM}?labelSelector=set%3Dpaged").json()["items"] == []


def test_watch_from_resource_version(server):
    rv = server.request("POST", CM, cm("w-a")).json()["metadata"]["resourceVersion"]
    server.request("DELETE", f"{CM}/w-a")
    r = server.request("GET", f"{CM}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
    events = [json.loads(line) for line in r.body.splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "w-a")]


def test_discovery(server):
    api = server.request("GET", "/api").json()
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    resources = {r["name"]: r for r in server.request("GET", "/api/v1").json()["resources"]}
    assert resources["configmaps"]["verbs"] == ["create", "delete", "deletecollection", "get", "list", "patch",
                                                "update", "watch"]
    assert resources["namespaces/status"]["verbs"] == ["get", "patch", "update"]
    assert resources["namespaces/finalize"]["verbs"] == ["update"]
    scheduling = {"name": "scheduling.k8s.io", "versions": [{"groupVersion": "scheduling.k8s.io/v1", "version": "v1"}],
                  "preferredVersion": {"groupVersion": "scheduling.k8s.io/v1", "version": "v1"}}
    group_list = server.request("GET", "/apis").json()
    assert group_list["kind"] == "APIGroupList" and scheduling in group_list["groups"]
    names = [g["name"] for g in group_list["groups"]]
    assert names == sorted(names, key=APIS_ORDER.index)  # kube-apiserver's order
    assert server.request("GET", "/apis/scheduling.k8s.io").json() == {"kind": "APIGroup", "apiVersion": "v1",
                                                                       **scheduling}
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    agg = server.request("GET", "/api", headers={"Accept": accept})
    assert agg.headers["content-type"] == accept
    core = agg.json()["items"][0]["versions"][0]
    cms = next(r for r in core["resources"] if r["resource"] == "configmaps")
    assert cms["responseKind"] == {"group": "", "version": "v1", "kind": "ConfigMap"} and cms["scope"] == "Namespaced"
    assert server.request("GET", "/api/v1/nothings").json()["message"] == "the server could not find the requested resource"
    assert server.request("GET", "/no/such/path").status == 404


def test_health_version_metrics(server):
    verbose = server.request("GET", "/readyz?verbose&exclude=etcd").body.decode()
    assert "[+]etcd excluded: ok" in verbose and verbose.endswith("readyz check passed\n")
    assert server.request("GET", "/readyz/etcd").body == b"ok"
    assert server.request("GET", "/livez/nope").status == 404
    assert server.request("GET", "/version").json()["gitVersion"] == "v1.34.0"
    metrics = server.request("GET", "/metrics").body.decode()
    assert 'apiserver_request_total{component="apiserver"' in metrics
    assert "apiserver_request_duration_seconds_bucket" in metrics


def test_table_output(server):
    server.request("POST", CM, cm("tabled"))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    table = server.request("GET", f"{CM}/tabled", headers={"Accept": accept}).json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["tabled", 1]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_events_expire_after_event_ttl(tmp_path):
    server = Server(str(tmp_path), ["--event-ttl=1s"]).start()
    try:
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "short-lived"}, "reason": "Test",
                 "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default"}}
        assert server.request("POST", "/api/v1/namespaces/default/events", event).status == 201
        deadline = time.time() + 10
        while time.time() < deadline:
            if server.request("GET", "/api/v1/namespaces/default/events/short-lived").status == 404:
                break
            time.sleep(0.2)
        assert server.request("GET", "/api/v1/namespaces/default/events/short-lived").status == 404
        assert server.request("POST", CM, cm("kept")).status == 201
        time.sleep(1.5)
        assert server.request("GET", f"{CM}/kept").status == 200  # only events carry the TTL
    finally:
        server.stop()


def test_wrongly_typed_bodies_are_400_not_500(server):
    r = server.request("POST", CM, {"metadata": {"name": "typed", "labels": {"k": 5}}})
    assert r.json() == status(400, "BadRequest", 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: '
                              'cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string')
    pod = {"metadata": {"name": "typed"}, "spec": {"containers": 5}}
    assert server.request("POST", "/api/v1/namespaces/default/pods", pod).status == 400
    server.request("POST", CM, cm("typed-patch"))
    patched = server.request("PATCH", f"{CM}/typed-patch", {"data": {"k": 7}},
                             {"Content-Type": "application/merge-patch+json"})
    assert patched.status == 422 and "cannot unmarshal number into Go struct field ConfigMap.data of type string" in \
        patched.json()["message"]
