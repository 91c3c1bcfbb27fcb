"""Impersonation under --authorization-mode=RBAC: Impersonate-* headers from raw HTTP and from
kubectl --as / --as-group / --as-uid, each part checked with the `impersonate` verb."""

from __future__ import annotations

import http.client
import json
import ssl

import pytest

from conftest import Server

RBAC = "/apis/rbac.authorization.k8s.io/v1"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("impersonation")
    tokens = data / "tokens.csv"
    tokens.write_text("alice-token,alice,1001\ncarol-token,carol,1003\n")
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(tokens)]).start()
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "as-bob"},
            "rules": [
                {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]},
                {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"],
                 "resourceNames": ["ops", "qa"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["uids", "userextras/scopes"],
                 "verbs": ["impersonate"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "alice-as-bob"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "as-bob"}}
    assert srv.request("POST", f"{RBAC}/clusterroles", role).status == 201
    assert srv.request("POST", f"{RBAC}/clusterrolebindings", binding).status == 201
    yield srv
    srv.stop()


def raw(srv: Server, method: str, path: str, headers: list[tuple[str, str]], body: object = None,
        ) -> tuple[int, bytes]:
    """A request whose headers may repeat (Impersonate-Group once per group, as client-go sends it)."""
    conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ssl.create_default_context(cafile=srv.ca_file),
                                       timeout=30)
    data = json.dumps(body).encode() if body is not None else b""
    conn.putrequest(method, path)
    for name, value in [*headers, ("Content-Type", "application/json"), ("Content-Length", str(len(data)))]:
        conn.putheader(name, value)
    conn.endheaders(data)
    resp = conn.getresponse()
    out = resp.status, resp.read()
    conn.close()
    return out


def test_allowed_impersonation_becomes_the_user(rbac_server):
    status, body = raw(rbac_server, "POST", WHOAMI, [
        ("Authorization", "Bearer alice-token"), ("Impersonate-User", "bob"), ("Impersonate-Group", "ops"),
        ("Impersonate-Group", "qa"), ("Impersonate-Uid", "b-1"), ("Impersonate-Extra-Scopes", "view"),
        ("Impersonate-Extra-Scopes", "edit")], REVIEW)
    assert status == 201, body
    assert json.loads(body)["status"]["userInfo"] == {
        "username": "bob", "uid": "b-1", "groups": ["ops", "qa", "system:authenticated"],
        "extra": {"scopes": ["view", "edit"]}}


def test_the_impersonated_user_is_the_one_authorized(rbac_server):
    resp = rbac_server.request("GET", "/api/v1/namespaces/default/configmaps", token="alice-token",
                               headers={"Impersonate-User": "bob"})
    assert resp.status == 403 and resp.json()["message"] == (
        'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the '
        'namespace "default"')


def test_refusals_name_what_could_not_be_impersonated(rbac_server):
    resp = rbac_server.request("GET", "/api/v1/namespaces", token="alice-token",
                               headers={"Impersonate-User": "carol"})
    assert resp.status == 403
    assert resp.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Forbidden", "code": 403,
        "details": {"name": "carol", "kind": "users"},
        "message": 'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at '
                   'the cluster scope'}
    resp = rbac_server.request("GET", "/api/v1/namespaces", token="carol-token",
                               headers={"Impersonate-User": "system:serviceaccount:default:default"})
    assert resp.status == 403 and resp.json()["message"] == (
        'serviceaccounts "default" is forbidden: User "carol" cannot impersonate resource "serviceaccounts" in '
        'API group "" in the namespace "default"')
    resp = rbac_server.request("GET", "/api/v1/namespaces", token="alice-token",
                               headers={"Impersonate-User": "bob", "Impersonate-Group": "system:masters"})
    assert resp.status == 403 and resp.json()["message"].startswith(
        'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups"')


def test_groups_without_a_user_are_an_internal_error(rbac_server):
    resp = rbac_server.request("GET", "/api/v1/namespaces", token="alice-token", headers={"Impersonate-Group": "ops"})
    assert resp.status == 500 and resp.headers["content-type"] == "text/plain; charset=utf-8"
    assert resp.body == (b'Internal Server Error: "/api/v1/namespaces": requested [{Group  ops    }] without '
                         b'impersonating a user\n')


def test_system_masters_may_impersonate_anyone(rbac_server):
    resp = rbac_server.request("POST", WHOAMI, REVIEW, headers={"Impersonate-User": "system:serviceaccount:ns1:sa"})
    assert resp.status == 201 and resp.json()["status"]["userInfo"] == {
        "username": "system:serviceaccount:ns1:sa",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"]}
    resp = rbac_server.request("POST", WHOAMI, REVIEW, headers={"Impersonate-User": "system:anonymous"})
    # Only system:unauthenticated, so not even system:basic-user's reviews.
    assert resp.status == 403 and resp.json()["message"] == (
        'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource '
        '"selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope')


def test_kubectl_as(rbac_server, kubectl_available):
    out = rbac_server.kubectl("--token", "alice-token", "--as", "bob", "--as-group", "ops", "--as-uid", "b-1",
                              "auth", "whoami", "-o", "json")
    assert json.loads(out.stdout)["status"]["userInfo"] == {
        "username": "bob", "uid": "b-1", "groups": ["ops", "system:authenticated"]}
    # --raw: kubectl's discovery would turn the refusal of /api into "Forbidden: unknown" first.
    denied = rbac_server.kubectl("--token", "alice-token", "--as", "carol", "get", "--raw", "/api/v1/pods",
                                 check=False)
    assert denied.returncode == 1
    assert ('users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the '
            'cluster scope') in denied.stderr


def test_kubectl_auth_can_i_as_a_service_account(rbac_server, kubectl_available):
    sa = "system:serviceaccount:default:default"
    assert rbac_server.kubectl("auth", "can-i", "--as", sa, "list", "secrets", check=False).stdout.strip() == "no"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "secret-reader", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "sas-read-secrets", "namespace": "default"},
               "subjects": [{"kind": "Group", "name": "system:serviceaccounts:default"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-reader"}}
    assert rbac_server.request("POST", f"{RBAC}/namespaces/default/roles", role).status == 201
    assert rbac_server.request("POST", f"{RBAC}/namespaces/default/rolebindings", binding).status == 201
    # Granted through the service account's namespace group, which impersonation adds.
    assert rbac_server.kubectl("auth", "can-i", "--as", sa, "list", "secrets").stdout.strip() == "yes"
    assert rbac_server.kubectl("auth", "can-i", "--as", sa, "list", "secrets", "-n", "kube-system",
                               check=False).stdout.strip() == "no"
    refused = rbac_server.kubectl("--token", "carol-token", "auth", "can-i", "--as", sa, "list", "secrets",
                                  check=False)
    assert refused.returncode != 0 and 'cannot impersonate resource "serviceaccounts"' in refused.stderr


def test_audit_event_keeps_both_users(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
    log = tmp_path / "audit.log"
    srv = Server(str(tmp_path), ["--audit-policy-file", str(policy), "--audit-log-path", str(log)]).start()
    try:
        resp = srv.request("GET", "/api/v1/namespaces/default/configmaps?limit=7",
                           headers={"Impersonate-User": "bob", "Impersonate-Group": "ops"})
        assert resp.status == 200
    finally:
        srv.stop()
    events = [json.loads(line) for line in log.read_text().splitlines()]
    [event] = [e for e in events if e["requestURI"].endswith("limit=7") and e["stage"] == "ResponseComplete"]
    assert "system:masters" in event["user"]["groups"]
    assert event["impersonatedUser"] == {"username": "bob", "groups": ["ops", "system:authenticated"]}
