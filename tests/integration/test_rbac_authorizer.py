"""--authorization-mode=RBAC: bootstrap roles, bindings granting access, Kubernetes' refusals."""

from __future__ import annotations

import pytest

from conftest import Server

RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("rbac")
    tokens = data / "tokens.csv"
    tokens.write_text('alice-token,alice,1001,"devs"\nbob-token,bob,1002\n')
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(tokens)]).start()
    yield srv
    srv.stop()


def test_bootstrap_roles_and_public_paths(rbac_server):
    names = {i["metadata"]["name"] for i in rbac_server.request("GET", f"{RBAC}/clusterroles").json()["items"]}
    assert {"cluster-admin", "system:discovery", "system:basic-user", "system:public-info-viewer"} <= names
    assert rbac_server.request("GET", "/healthz", token=None).status == 200
    anonymous = rbac_server.request("GET", "/api/v1/namespaces", token=None)
    assert anonymous.status == 403 and anonymous.json()["message"] == (
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at '
        'the cluster scope')
    assert rbac_server.request("GET", "/apis", token="bob-token").status == 200  # system:discovery


def test_bindings_grant_exactly_their_rules(rbac_server):
    ns = "/api/v1/namespaces/default"
    assert rbac_server.request("GET", f"{ns}/configmaps", token="alice-token").status == 403
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "devs-read"}, "subjects": [{"kind": "Group", "name": "devs"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"}}
    assert rbac_server.request("POST", f"{RBAC}/namespaces/default/roles", role).status == 201
    assert rbac_server.request("POST", f"{RBAC}/namespaces/default/rolebindings", binding).status == 201
    assert rbac_server.request("GET", f"{ns}/configmaps", token="alice-token").status == 200
    assert rbac_server.request("GET", f"{ns}/configmaps", token="bob-token").status == 403
    write = rbac_server.request("POST", f"{ns}/configmaps", {"metadata": {"name": "x"}}, token="alice-token")
    assert write.status == 403 and write.json()["message"] == (
        'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the '
        'namespace "default"')
    other_ns = rbac_server.request("GET", "/api/v1/namespaces/kube-system/configmaps", token="alice-token")
    assert other_ns.status == 403


def test_authorizer_reads_bindings_from_synced_informers(rbac_server):
    """The RBAC authorizer's roles and bindings come from shared informers: the server is ready once they
    have listed, and a binding takes effect when created and stops when deleted."""
    verbose = rbac_server.request("GET", "/readyz?verbose").body.decode()
    assert "[+]informer-sync ok" in verbose
    nodes = "/api/v1/nodes"
    assert rbac_server.request("GET", nodes, token="bob-token").status == 403
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "bob-views"}, "subjects": [{"kind": "User", "name": "bob"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-reader"}}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "system:node-reader"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}
    assert rbac_server.request("POST", f"{RBAC}/clusterroles", role).status == 201
    assert rbac_server.request("POST", f"{RBAC}/clusterrolebindings", binding).status == 201
    assert rbac_server.request("GET", nodes, token="bob-token").status == 200
    assert rbac_server.request("DELETE", f"{RBAC}/clusterrolebindings/bob-views").status == 200
    assert rbac_server.request("GET", nodes, token="bob-token").status == 403
