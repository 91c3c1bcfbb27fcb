"""Protobuf over HTTP, as client-go speaks it: a sample of every built-in kind (tests/manifests/valid) is
created, replaced, deleted (with a DeleteOptions of the kind's own group version) and deleted as a
collection with protobuf bodies, answered in protobuf; lists, watches and errors in protobuf too."""

from __future__ import annotations

import copy
import http.client
import json
import random
import ssl
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import wait_for
from kube_apiserver.apimachinery import protobuf

TESTS = Path(__file__).resolve().parents[1]
MANIFESTS = sorted((TESTS / "manifests" / "valid").glob("*.yaml"))
DISCOVERY = json.loads((TESTS / "data" / "discovery-v1.34.json").read_text())
PB = "application/vnd.kubernetes.protobuf"
PB_HEADERS = {"Content-Type": PB, "Accept": PB}
# Second samples for deletecollection where a name must keep a form (an IPAddress is named by its address).
SECOND_NAMES = {"IPAddress": "10.200.0.11"}
BACKUPS = "/apis/corpus.example.com/v1/namespaces/corpus/backups"


def resource_of(obj: dict[str, Any]) -> dict[str, Any]:
    group, _, version = obj["apiVersion"].rpartition("/")
    return next(
        r
        for r in DISCOVERY
        if r["group"] == group
        and r["version"] == version
        and r["kind"] == obj["kind"]
        and "/" not in r["name"]
    )


def collection(obj: dict[str, Any]) -> str:
    resource = resource_of(obj)
    root = f"/apis/{obj['apiVersion']}" if "/" in obj["apiVersion"] else f"/api/{obj['apiVersion']}"
    namespace = obj["metadata"].get("namespace", "default") if resource["namespaced"] else ""
    return f"{root}/namespaces/{namespace}/{resource['name']}" if namespace else f"{root}/{resource['name']}"


def decoded(resp: Any) -> dict[str, Any]:
    assert resp.headers.get("content-type") == PB, (resp.status, resp.body[:300])
    return protobuf.decode(resp.body, [])


def delete_options(api_version: str) -> bytes:
    return protobuf.encode(
        {
            "apiVersion": api_version,
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            "propagationPolicy": "Background",
        }
    )


def samples() -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text()) for path in MANIFESTS]


@pytest.fixture(scope="module")
def created(server) -> dict[str, Any]:
    """Every sample created in file-name order with a protobuf body; custom resources as JSON."""
    out = {}
    for obj in samples():
        if protobuf.has_kind(obj["apiVersion"], obj["kind"]):
            out[obj["kind"] + " " + obj["apiVersion"]] = server.request(
                "POST", collection(obj), protobuf.encode(obj), PB_HEADERS
            )
        else:  # the custom resource, once its definition is served
            wait_for(lambda backup=obj: server.request("POST", BACKUPS, backup).status == 201)
    return out


BUILT_IN = [
    f"{o['kind']} {o['apiVersion']}" for o in samples() if protobuf.has_kind(o["apiVersion"], o["kind"])
]


@pytest.mark.parametrize("key", BUILT_IN)
def test_create_and_update_in_protobuf(server, created, key):
    resp = created[key]
    assert resp.status in (200, 201), (resp.status, resp.body[:500])
    got = decoded(resp)
    kind, api_version = key.split(" ")
    if kind == "Binding":
        assert got["kind"] == "Status" and got["status"] == "Success"  # what a binding answers
        return
    assert (got["kind"], got["apiVersion"]) == (kind, api_version)
    if "update" not in resource_of(got)["verbs"]:
        return  # reviews are only created
    path = f"{collection(got)}/{got['metadata']['name']}"
    live = server.request("GET", path).json()
    assert got["metadata"]["uid"] == live["metadata"]["uid"]
    live["metadata"].setdefault("labels", {})["protobuf"] = "put"
    put = server.request("PUT", path, protobuf.encode(live), PB_HEADERS)
    assert put.status == 200, put.body[:500]
    assert decoded(put)["metadata"]["labels"]["protobuf"] == "put"


def second_sample(obj: dict[str, Any]) -> dict[str, Any]:
    """Another object of the sample's kind, labelled for a deletecollection; some kinds' names have a form."""
    second = copy.deepcopy(obj)
    meta = second["metadata"]
    meta["labels"] = {"protobuf": "collection"}
    if obj["kind"] == "IPAddress":
        meta["name"] = "10.200.0.11"
    elif obj["kind"] == "APIService":
        second["spec"]["version"] = "v1beta2"
        meta["name"] = f"v1beta2.{obj['spec']['group']}"
    elif obj["kind"] == "CustomResourceDefinition":
        second["spec"]["names"] = {
            "plural": "copies",
            "singular": "copy",
            "kind": "Copy",
            "listKind": "CopyList",
        }
        meta["name"] = f"copies.{obj['spec']['group']}"
    else:
        meta["name"] += "-second"
    return second


def test_custom_resources_answer_json_and_refuse_protobuf(server, created):
    backups = BACKUPS
    listed = server.request("GET", backups, headers={"Accept": f"{PB}, application/json"})
    assert listed.status == 200 and listed.headers["content-type"] == "application/json"
    refused = server.request("GET", backups, headers={"Accept": PB})
    assert refused.status == 406 and refused.json()["message"] == (
        "only the following media types are accepted: application/json, application/yaml"
    )
    missing = server.request("GET", f"{backups}/absent", headers={"Accept": f"{PB}, application/json"})
    assert missing.status == 404 and missing.json()["reason"] == "NotFound"  # the handler's Status: JSON
    # Errors before any handler (here: no such group) come from the server's own serializers, protobuf too.
    unknown = server.request("GET", "/apis/nothing.example.com/v1/things", headers={"Accept": PB})
    assert unknown.status == 404 and decoded(unknown)["reason"] == "NotFound"
    body = protobuf.envelope("corpus.example.com/v1", "Backup", b"")
    assert server.request("POST", backups, body, {"Content-Type": PB}).status == 415


def test_list_and_status_error_in_protobuf(server, created):
    listed = server.request("GET", "/api/v1/namespaces/corpus/configmaps", headers={"Accept": PB})
    got = decoded(listed)
    assert got["kind"] == "ConfigMapList" and got["metadata"]["resourceVersion"]
    missing = server.request("GET", "/api/v1/namespaces/corpus/configmaps/absent", headers={"Accept": PB})
    status = decoded(missing)
    assert missing.status == 404 and status == {
        "apiVersion": "v1",
        "kind": "Status",
        "status": "Failure",
        "reason": "NotFound",
        "code": 404,
        "message": 'configmaps "absent" not found',
        "details": {"name": "absent", "kind": "configmaps"},
    }


def test_watch_frames_are_length_prefixed_watch_events(server, created):
    ctx = ssl.create_default_context(cafile=server.ca_file)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=30)
    conn.request(
        "GET",
        "/api/v1/namespaces/corpus/configmaps?watch=true&timeoutSeconds=1",
        headers={"Accept": PB, "Authorization": f"Bearer {server.token}"},
    )
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("content-type") == f"{PB};stream=watch"
    stream = resp.read()
    conn.close()
    events = []
    while stream:
        size = int.from_bytes(stream[:4], "big")
        frame, stream = stream[4 : 4 + size], stream[4 + size :]
        event = protobuf.decode_message(protobuf.META + "WatchEvent", frame)
        events.append((event["type"], event["object"]))
    assert events and all(kind == "ADDED" and obj["kind"] == "ConfigMap" for kind, obj in events)


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_sends_and_reads_protobuf(server, created):
    """kubectl's typed clients (create <generator>, auth can-i) send protobuf and accept it back."""
    made = server.kubectl("create", "configmap", "kubectl-pb", "-n", "corpus", "--from-literal=a=b", "-v=8")
    assert made.stdout.strip() == "configmap/kubectl-pb created"
    for sent in ("Content-Type: application/vnd.kubernetes.protobuf", "Response Status: 201 Created"):
        assert sent in made.stderr
    assert made.stderr.count("Content-Type: application/vnd.kubernetes.protobuf") == 2  # request and answer
    assert server.request("GET", "/api/v1/namespaces/corpus/configmaps/kubectl-pb").json()["data"] == {
        "a": "b"
    }
    review = server.kubectl("auth", "can-i", "create", "pods", "-n", "corpus", "-v=8")
    assert review.stdout.strip() == "yes"
    assert review.stderr.count("Content-Type: application/vnd.kubernetes.protobuf") == 2


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_drain_reads_protobuf_lists_patches_and_errors(server):
    """kubectl drain's typed client lists the node's pods, patches the node and reads the evicted pod's 404,
    all answered in protobuf: it finds the pod in the PodList and knows it is gone from the Status."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "pb-node"}}
    assert server.request("POST", "/api/v1/nodes", node).status == 201
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pb-drained"},
        "spec": {"nodeName": "pb-node", "containers": [{"name": "c", "image": "i"}]},
    }
    assert server.request("POST", "/api/v1/namespaces/default/pods", pod).status == 201
    drained = server.kubectl("drain", "pb-node", "--force", "--grace-period=0", "--timeout=20s", "-v=8")
    assert "pod/pb-drained evicted" in drained.stdout and "node/pb-node drained" in drained.stdout
    answers = [
        line
        for line in drained.stderr.splitlines()
        if "Content-Type: application/vnd.kubernetes.protobuf" in line
    ]
    assert len(answers) >= 3  # the node's patch, the pod list, the pod's 404
    assert server.request("GET", "/api/v1/namespaces/default/pods/pb-drained").status == 404


@pytest.mark.parametrize("key", reversed(BUILT_IN))  # dependents first: a Pod's ServiceAccount outlives it
def test_delete_and_deletecollection_in_protobuf(server, created, key):
    kind, api_version = key.split(" ")
    sample = next(o for o in samples() if (o["kind"], o["apiVersion"]) == (kind, api_version))
    resource = resource_of(sample)
    if "delete" not in resource["verbs"] or kind == "Namespace":
        return  # the samples live in the namespace
    path = f"{collection(sample)}/{sample['metadata']['name']}"
    gone = server.request("DELETE", path, delete_options(api_version), PB_HEADERS)
    assert gone.status in (200, 202), gone.body[:500]
    assert decoded(gone)["kind"] in (kind, "Status")
    if "deletecollection" not in resource["verbs"]:
        return
    again = server.request("POST", collection(sample), protobuf.encode(second_sample(sample)), PB_HEADERS)
    assert again.status == 201, again.body[:500]
    swept = server.request(
        "DELETE",
        collection(sample) + "?labelSelector=protobuf%3Dcollection",
        delete_options(api_version),
        PB_HEADERS,
    )
    assert swept.status == 200, swept.body[:500]
    assert decoded(swept)["kind"] == f"{kind}List"


def test_subresources_in_protobuf(server):
    """What controllers send to subresources: a Scale (PUT), an Eviction with its DeleteOptions, a
    TokenRequest; each answered in protobuf."""
    ns = "/api/v1/namespaces/default"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "pb-scale"},
        "spec": {
            "selector": {"matchLabels": {"app": "pb"}},
            "template": {
                "metadata": {"labels": {"app": "pb"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    assert server.request("POST", "/apis/apps/v1/namespaces/default/deployments", deployment).status == 201
    scale_path = "/apis/apps/v1/namespaces/default/deployments/pb-scale/scale"
    scale = decoded(server.request("GET", scale_path, headers={"Accept": PB}))
    assert (scale["apiVersion"], scale["kind"], scale["spec"]) == ("autoscaling/v1", "Scale", {"replicas": 1})
    scale["spec"]["replicas"] = 3
    scaled = server.request("PUT", scale_path, protobuf.encode(scale), PB_HEADERS)
    assert scaled.status == 200 and decoded(scaled)["spec"] == {"replicas": 3}

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pb-evict"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    assert server.request("POST", f"{ns}/pods", pod).status == 201
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "pb-evict"},
        "deleteOptions": {"gracePeriodSeconds": 0},
    }
    evicted = server.request("POST", f"{ns}/pods/pb-evict/eviction", protobuf.encode(eviction), PB_HEADERS)
    assert evicted.status == 201 and decoded(evicted)["status"] == "Success"
    assert server.request("GET", f"{ns}/pods/pb-evict").status == 404

    wait_for(lambda: server.request("GET", f"{ns}/serviceaccounts/default").status == 200)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": {},
        "spec": {"audiences": ["pb"], "expirationSeconds": 3600},
    }
    token = server.request(
        "POST", f"{ns}/serviceaccounts/default/token", protobuf.encode(request), PB_HEADERS
    )
    assert token.status == 201
    got = decoded(token)
    assert got["kind"] == "TokenRequest" and got["status"]["token"].count(".") == 2
    assert got["spec"]["audiences"] == ["pb"]


def test_mutated_protobuf_bodies_never_answer_5xx(server, created):
    """Each sample's protobuf body with a few bytes changed: decoded and judged (2xx/4xx), never a 5xx."""
    rng = random.Random(7)
    answers = []
    for obj in samples():
        if not protobuf.has_kind(obj["apiVersion"], obj["kind"]):
            continue
        valid = protobuf.encode({**obj, "metadata": {**obj.get("metadata", {}), "name": "mutant"}})
        for _ in range(3):
            body = bytearray(valid)
            for _ in range(rng.randint(1, 3)):
                body[rng.randrange(len(protobuf.MAGIC), len(body))] = rng.randrange(256)
            resp = server.request("POST", collection(obj), bytes(body), PB_HEADERS)
            answers.append((obj["kind"], resp.status, resp.body[:200]))
    assert [a for a in answers if a[1] >= 500] == []


def test_discovery_documents_in_protobuf(server):
    for path, kind in (
        ("/api", "APIVersions"),
        ("/apis", "APIGroupList"),
        ("/apis/apps", "APIGroup"),
        ("/apis/apps/v1", "APIResourceList"),
        ("/api/v1", "APIResourceList"),
    ):
        doc = decoded(server.request("GET", path, headers={"Accept": f"{PB}, application/json"}))
        assert (doc["apiVersion"], doc["kind"]) == ("v1", kind)
        assert doc == {"apiVersion": "v1", **server.request("GET", path).json()}
    aggregated = "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    for path in ("/api", "/apis"):
        answer = server.request(
            "GET", path, headers={"Accept": f"{PB};{aggregated},application/json;{aggregated}"}
        )
        assert answer.headers["content-type"] == f"{PB};{aggregated}"
        doc = protobuf.decode(answer.body, [])
        as_json = server.request("GET", path, headers={"Accept": f"application/json;{aggregated}"}).json()
        assert doc["kind"] == "APIGroupDiscoveryList"
        # a repeated field has no presence in protobuf: an empty list (a Stale APIService's resources, once one
        # of this module's APIServices has failed its discovery fetch) decodes as absent
        assert [g["versions"] for g in doc["items"]] == [
            [{k: v for k, v in version.items() if v != []} for version in g["versions"]] for g in as_json["items"]]
