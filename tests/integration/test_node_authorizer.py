"""--authorization-mode=Node,RBAC with NodeRestriction (kubeadm's): a kubelet's client certificate
(CN=system:node:node1, O=system:nodes) reads what its pods use and writes its own Node, Lease and pods'
status; everything else is refused with kube-apiserver's 403 messages."""

from __future__ import annotations

import http.client
import json
import ssl
from typing import Any

import pytest

from conftest import Response, Server, wait_for
from kube_apiserver.testing.certs import CertificateAuthority, write_pair

NS = "default"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pki = tmp_path_factory.mktemp("kubelet-pki")
    ca = CertificateAuthority.generate("client-ca")
    ca_file = str(pki / "ca.crt")
    ca.write(ca_file, str(pki / "ca.key"))
    kubelet = write_pair(str(pki), "kubelet", *ca.issue("system:node:node1", ("system:nodes",), client=True))
    server = Server(
        str(tmp_path_factory.mktemp("apiserver")),
        [
            "--client-ca-file",
            ca_file,
            "--authorization-mode",
            "Node,RBAC",
            "--enable-admission-plugins",
            "NodeRestriction",
        ],
    ).start()
    try:
        _objects(server)
        yield server, kubelet
    finally:
        server.stop()


def _objects(server: Server) -> None:
    """As the admin: two nodes, and on each a pod mounting a secret of its own."""
    wait_for(lambda: server.request("GET", f"/api/v1/namespaces/{NS}/serviceaccounts/default").status == 200)
    for n in ("1", "2"):
        assert server.request("POST", "/api/v1/nodes", {"metadata": {"name": f"node{n}"}}).status == 201
        secret = {"metadata": {"name": f"s{n}"}, "stringData": {"k": "v"}}
        assert server.request("POST", f"/api/v1/namespaces/{NS}/secrets", secret).status == 201
        pod = {
            "metadata": {"name": f"p{n}"},
            "spec": {
                "nodeName": f"node{n}",
                "automountServiceAccountToken": False,
                "containers": [{"name": "c", "image": "busybox"}],
                "volumes": [{"name": "s", "secret": {"secretName": f"s{n}"}}],
            },
        }
        assert server.request("POST", f"/api/v1/namespaces/{NS}/pods", pod).status == 201


def as_kubelet(cluster, method: str, path: str, body: Any = None, headers: dict | None = None) -> Response:
    server, (cert, key) = cluster
    ctx = ssl.create_default_context(cafile=server.ca_file)
    ctx.load_cert_chain(cert, key)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=30)
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=hdrs)
        resp = conn.getresponse()
        return Response(resp.status, dict(resp.getheaders()), resp.read())
    finally:
        conn.close()


def refusal(resp: Response) -> tuple[int, str]:
    body = resp.json()
    assert body["kind"] == "Status" and body["reason"] == "Forbidden", body
    return resp.status, body["message"]


def test_reads_the_secret_of_its_pod(cluster):
    # the graph follows the pods' informer: the first read may come before it saw the pod
    resp = wait_for(
        lambda: (r := as_kubelet(cluster, "GET", f"/api/v1/namespaces/{NS}/secrets/s1")).status == 200 and r
    )
    assert resp.json()["metadata"]["name"] == "s1"
    # the kubelet's secret manager watches one secret by name
    one = as_kubelet(cluster, "GET", f"/api/v1/namespaces/{NS}/secrets?fieldSelector=metadata.name%3Ds1")
    assert one.status == 200


def test_cannot_read_another_nodes_secret(cluster):
    wait_for(lambda: as_kubelet(cluster, "GET", f"/api/v1/namespaces/{NS}/secrets/s1").status == 200)
    assert refusal(as_kubelet(cluster, "GET", f"/api/v1/namespaces/{NS}/secrets/s2")) == (
        403,
        (
            'secrets "s2" is forbidden: User "system:node:node1" cannot get resource "secrets" in API group "" in the '
            "namespace \"default\": no relationship found between node 'node1' and this object"
        ),
    )
    assert refusal(as_kubelet(cluster, "GET", f"/api/v1/namespaces/{NS}/secrets")) == (
        403,
        (
            'secrets is forbidden: User "system:node:node1" cannot list resource "secrets" in API group "" in the '
            'namespace "default": No Object name found'
        ),
    )


def test_its_own_node_and_its_status(cluster):
    assert as_kubelet(cluster, "GET", "/api/v1/nodes/node1").status == 200
    status = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    patched = as_kubelet(cluster, "PATCH", "/api/v1/nodes/node1/status", status, MERGE)
    assert patched.status == 200, patched.body
    assert patched.json()["status"]["conditions"][0]["reason"] == "KubeletReady"
    assert refusal(as_kubelet(cluster, "PATCH", "/api/v1/nodes/node2/status", status, MERGE)) == (
        403,
        'nodes "node2" is forbidden: node "node1" is not allowed to modify node "node2"',
    )
    assert refusal(as_kubelet(cluster, "GET", "/api/v1/nodes/node2")) == (
        403,
        (
            'nodes "node2" is forbidden: User "system:node:node1" cannot get resource "nodes" in API group "" at the '
            "cluster scope: node 'node1' cannot read 'node2', only its own Node object"
        ),
    )
    taint = {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    assert refusal(as_kubelet(cluster, "PATCH", "/api/v1/nodes/node1", taint, MERGE)) == (
        403,
        'nodes "node1" is forbidden: node "node1" is not allowed to modify taints',
    )


def test_its_lease(cluster):
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    lease = {"metadata": {"name": "node1"}, "spec": {"holderIdentity": "node1", "leaseDurationSeconds": 40}}
    created = as_kubelet(cluster, "POST", leases, lease)
    assert created.status == 201, created.body
    renewed = as_kubelet(cluster, "PUT", f"{leases}/node1", created.json())
    assert renewed.status == 200, renewed.body
    other = {"metadata": {"name": "node2"}, "spec": {"holderIdentity": "node2"}}
    assert refusal(as_kubelet(cluster, "POST", leases, other)) == (
        403,
        (
            'leases.coordination.k8s.io "node2" is forbidden: can only access node lease with the same name as the '
            "requesting node"
        ),
    )
    assert refusal(as_kubelet(cluster, "GET", f"{leases}/node2"))[1].endswith(
        ": can only access node lease with the same name as the requesting node"
    )


def test_pods_of_its_node(cluster):
    listed = as_kubelet(cluster, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1")
    assert listed.status == 200 and [p["metadata"]["name"] for p in listed.json()["items"]] == ["p1"]
    assert refusal(as_kubelet(cluster, "GET", "/api/v1/pods")) == (
        403,
        (
            'pods is forbidden: User "system:node:node1" cannot list resource "pods" in API group "" at the cluster '
            "scope: can only list/watch pods with spec.nodeName field selector"
        ),
    )
    running = {"status": {"phase": "Running"}}
    assert (
        as_kubelet(cluster, "PATCH", f"/api/v1/namespaces/{NS}/pods/p1/status", running, MERGE).status == 200
    )
    assert refusal(
        as_kubelet(cluster, "PATCH", f"/api/v1/namespaces/{NS}/pods/p2/status", running, MERGE)
    ) == (
        403,
        'pods "p2" is forbidden: node "node1" can only update pod status for pods with spec.nodeName set to '
        "itself",
    )
    pod = {
        "metadata": {"name": "sneaky"},
        "spec": {"nodeName": "node1", "containers": [{"name": "c", "image": "busybox"}]},
    }
    assert refusal(as_kubelet(cluster, "POST", f"/api/v1/namespaces/{NS}/pods", pod)) == (
        403,
        (
            'pods "sneaky" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node1" can '
            "only create mirror pods"
        ),
    )


def test_off_without_the_node_mode(tmp_path):
    """Node is not there unless asked: RBAC alone gives a kubelet nothing of the graph's."""
    server = Server(str(tmp_path), ["--authorization-mode", "RBAC"]).start()
    try:
        user = {"Impersonate-User": "system:node:node1", "Impersonate-Group": "system:nodes"}
        resp = server.request("GET", f"/api/v1/namespaces/{NS}/secrets/s1", headers=user)
        assert resp.status == 403
        assert resp.json()["message"].endswith(
            'cannot get resource "secrets" in API group "" in the namespace "default"'
        )
    finally:
        server.stop()


def test_subject_access_review_with_a_field_selector(cluster):
    """A SubjectAccessReview asks the Node authorizer with the request's field selector, raw or as requirements."""
    server, _ = cluster

    def allowed(field_selector: dict | None) -> bool:
        attributes = {"verb": "list", "resource": "pods", "version": "v1"}
        if field_selector is not None:
            attributes["fieldSelector"] = field_selector
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "system:node:node1",
                "groups": ["system:nodes"],
                "resourceAttributes": attributes,
            },
        }
        resp = server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        assert resp.status == 201, resp.body
        return resp.json()["status"].get("allowed", False)

    assert allowed({"rawSelector": "spec.nodeName=node1"})
    assert allowed({"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["node1"]}]})
    assert not allowed(
        {"requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["node1", "node2"]}]}
    )
    assert not allowed({"rawSelector": "spec.nodeName=node2"})
    assert not allowed(None)


def test_tokens_and_evictions_only_for_its_pods(cluster):
    server, _ = cluster
    p1 = server.request("GET", f"/api/v1/namespaces/{NS}/pods/p1").json()["metadata"]
    token = f"/api/v1/namespaces/{NS}/serviceaccounts/default/token"

    def request(pod: str, uid: str) -> dict:
        ref = {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid}
        return {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"boundObjectRef": ref},
        }

    issued = wait_for(
        lambda: (r := as_kubelet(cluster, "POST", token, request("p1", p1["uid"]))).status != 403 and r
    )
    assert issued.status == 201, issued.body
    assert refusal(as_kubelet(cluster, "POST", token, request("p1", "stale"))) == (
        403,
        (
            'serviceaccounts "default" is forbidden: the UID in the bound object reference (stale) does not match the '
            "UID in record. The object might have been deleted and then recreated"
        ),
    )
    p2 = server.request("GET", f"/api/v1/namespaces/{NS}/pods/p2").json()["metadata"]
    assert refusal(as_kubelet(cluster, "POST", token, request("p2", p2["uid"]))) == (
        403,
        'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    )
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p2", "namespace": NS}}
    assert refusal(as_kubelet(cluster, "POST", f"/api/v1/namespaces/{NS}/pods/p2/eviction", eviction)) == (
        403,
        'pods "p2" is forbidden: node node1 can only evict pods with spec.nodeName set to itself',
    )
