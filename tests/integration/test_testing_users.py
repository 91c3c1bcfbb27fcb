"""kube_apiserver.testing.users: users and groups in one call (client certificates from a client CA the server
trusts, tokens from /debug/testing/users), RBAC grants that are in effect when grant returns."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from conftest import Server
from kube_apiserver.testing.users import CredentialsUnavailable, client_ca_args, create_user, grant

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    pki = str(tmp_path_factory.mktemp("client-ca"))
    srv = Server(
        str(tmp_path_factory.mktemp("users")),
        [*client_ca_args(pki), "--enable-testing-endpoints", "--authorization-mode", "RBAC"],
    ).start()
    yield srv
    srv.stop()


def forbidden_list(user: str) -> str:
    return (
        f'configmaps is forbidden: User "{user}" cannot list resource "configmaps" in API group "" in the '
        f'namespace "default"'
    )


def test_certificate_user_is_forbidden_then_granted(rbac_server, tmp_path):
    alice = create_user(rbac_server, "alice", groups=["dev"], directory=str(tmp_path))
    assert alice.cert_file and alice.token  # both mechanisms are on: the kubeconfig uses the certificate
    refused = alice.request("GET", CONFIGMAPS)
    assert refused.status == 403
    assert refused.json()["message"] == forbidden_list("alice")
    assert refused.json()["reason"] == "Forbidden"
    grant(
        rbac_server,
        alice,
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "get"]}],
        namespace="default",
    )
    assert alice.request("GET", CONFIGMAPS).status == 200
    assert (
        alice.request("GET", "/api/v1/namespaces/kube-system/configmaps").status == 403
    )  # a Role: one namespace


def test_user_identity_and_groups_as_the_server_sees_them(rbac_server):
    bob = create_user(rbac_server, "bob", groups=["qa", "ops"])
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    for headers in ({}, {"Authorization": f"Bearer {bob.token}"}):  # certificate, then token
        seen = bob.request(
            "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review, headers
        ).json()
        info = seen["status"]["userInfo"]
        assert info["username"] == "bob"
        assert info["groups"] == ["qa", "ops", "system:authenticated"]


def test_group_grant_reaches_its_members_only(rbac_server):
    carol, dave = create_user(rbac_server, "carol", groups=["readers"]), create_user(rbac_server, "dave")
    grant(rbac_server, "readers", cluster_role="view", group=True)
    assert carol.request("GET", CONFIGMAPS).status == 200
    assert dave.request("GET", CONFIGMAPS).status == 403


def test_official_client_and_kubeconfig(rbac_server):
    from kubernetes import client

    erin = create_user(rbac_server, "erin")
    grant(rbac_server, erin, [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}])
    names = [n.metadata.name for n in client.CoreV1Api(erin.api_client()).list_namespace().items]
    assert "default" in names
    with open(erin.kubeconfig) as f:
        written = yaml.safe_load(f)
    assert written == erin.kubeconfig_dict
    assert written["users"][0]["user"]["client-certificate"] == erin.cert_file
    kubectl = ["kubectl", "--kubeconfig", erin.kubeconfig, "--cache-dir", erin.directory]
    listed = subprocess.run(
        [*kubectl, "get", "namespaces", "-o", "name"], capture_output=True, text=True, timeout=60
    )
    assert "namespace/default" in listed.stdout, listed.stderr
    refused = subprocess.run([*kubectl, "get", "secrets"], capture_output=True, text=True, timeout=60)
    assert 'User "erin" cannot list resource "secrets"' in refused.stderr


def test_token_only_server(tmp_path):
    srv = Server(
        str(tmp_path / "data"), ["--enable-testing-endpoints", "--authorization-mode", "RBAC"]
    ).start()
    try:
        frank = create_user(srv, "frank", groups=["dev"])
        assert not frank.cert_file and frank.kubeconfig_dict["users"][0]["user"] == {"token": frank.token}
        assert frank.request("GET", CONFIGMAPS).json()["message"] == forbidden_list("frank")
        grant(srv, frank, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}])
        assert frank.request("GET", CONFIGMAPS).status == 200
        listed = srv.request("GET", "/debug/testing/users").json()
        assert listed["items"] == [{"name": "frank", "uid": "", "groups": ["dev"]}]
        assert srv.request("DELETE", "/debug/testing/users").status == 200
        assert frank.request("GET", CONFIGMAPS).status == 401  # forgotten
    finally:
        srv.stop()


def test_testing_users_endpoint_is_off_by_default_and_checks_input(rbac_server, tmp_path):
    srv = Server(str(tmp_path / "data"), []).start()
    try:
        assert srv.request("POST", "/debug/testing/users", {"name": "x"}).status == 404
        with pytest.raises(CredentialsUnavailable):
            create_user(srv, "nobody")
    finally:
        srv.stop()
    for body, message in (
        ({}, "name: Required value: a testing user needs a name"),
        ({"name": "x", "groups": "dev"}, "groups: Invalid value: must be a list of non-empty strings"),
        ({"name": "x", "role": "admin"}, "unknown fields: role; a testing user has name, groups and uid"),
        ("[", None),
    ):
        resp = rbac_server.request("POST", "/debug/testing/users", body)
        assert resp.status == 400, resp.body
        assert resp.json()["reason"] == "BadRequest"
        if message:
            assert resp.json()["message"] == message
    assert rbac_server.request("PUT", "/debug/testing/users", {}).status == 405
