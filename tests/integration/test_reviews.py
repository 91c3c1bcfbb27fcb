"""authentication.k8s.io and authorization.k8s.io reviews, answered from the server's real authenticator
and authorizer (AlwaysAllow and RBAC), through raw HTTP and kubectl auth."""

from __future__ import annotations

import pytest

from conftest import Server

AUTHN = "/apis/authentication.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def review(kind: str, spec: dict | None = None, **extra) -> dict:
    group = "authentication.k8s.io" if kind in ("TokenReview", "SelfSubjectReview") else "authorization.k8s.io"
    body = {"apiVersion": f"{group}/v1", "kind": kind, **extra}
    if spec is not None:
        body["spec"] = spec
    return body


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("reviews")
    (data / "tokens.csv").write_text('alice-token,alice,1001,"devs"\n')
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(data / "tokens.csv")]).start()
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"],
                       "resourceNames": ["one"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "devs-read"}, "subjects": [{"kind": "Group", "name": "devs"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"}}
    dangling = {**binding, "metadata": {"name": "dangling"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "missing"}}
    assert srv.request("POST", f"{RBAC}/namespaces/default/roles", role).status == 201
    assert srv.request("POST", f"{RBAC}/namespaces/default/rolebindings", binding).status == 201
    assert srv.request("POST", f"{RBAC}/namespaces/default/rolebindings", dangling).status == 201
    yield srv
    srv.stop()


def test_discovery_lists_the_review_resources(server):
    authn = {r["name"]: r for r in server.request("GET", AUTHN).json()["resources"]}
    authz = {r["name"]: r for r in server.request("GET", AUTHZ).json()["resources"]}
    assert set(authn) == {"selfsubjectreviews", "tokenreviews"}
    assert set(authz) == {"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews",
                          "subjectaccessreviews"}
    assert all(r["verbs"] == ["create"] for r in [*authn.values(), *authz.values()])
    assert authz["localsubjectaccessreviews"]["namespaced"] is True


def test_self_subject_review_and_whoami(server):
    out = server.request("POST", f"{AUTHN}/selfsubjectreviews", review("SelfSubjectReview"))
    assert out.status == 201
    info = out.json()["status"]["userInfo"]
    assert info["username"] == "kubernetes-admin" or info["username"]
    assert "system:masters" in info["groups"] and "system:authenticated" in info["groups"]
    whoami = server.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}").stdout
    assert "system:masters" in whoami


def test_token_review_of_service_account_and_static_tokens(server):
    token = server.kubectl("create", "token", "default", "-n", "default").stdout.strip()
    out = server.request("POST", f"{AUTHN}/tokenreviews", review("TokenReview", {"token": token}))
    assert out.status == 201
    status = out.json()["status"]
    assert status["authenticated"] is True
    assert status["user"]["username"] == "system:serviceaccount:default:default"
    assert {"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"} <= \
        set(status["user"]["groups"])
    assert status["audiences"] and status["user"]["uid"]
    wrong_audience = server.request("POST", f"{AUTHN}/tokenreviews",
                                    review("TokenReview", {"token": token, "audiences": ["other"]})).json()
    assert "authenticated" not in wrong_audience["status"]
    assert "is invalid for the target audiences" in wrong_audience["status"]["error"]
    admin = server.request("POST", f"{AUTHN}/tokenreviews", review("TokenReview", {"token": server.token}))
    assert admin.json()["status"]["user"]["groups"] == ["system:masters", "system:authenticated"]
    bogus = server.request("POST", f"{AUTHN}/tokenreviews", review("TokenReview", {"token": "nope"})).json()
    assert bogus["status"] == {"user": {}, "error": "invalid bearer token"}
    missing = server.request("POST", f"{AUTHN}/tokenreviews", review("TokenReview", {}))
    assert missing.status == 400
    assert missing.json()["message"] == "token is required for TokenReview in authentication"


def test_access_reviews_validation(server):
    none = server.request("POST", f"{AUTHZ}/subjectaccessreviews", review("SubjectAccessReview", {}))
    assert none.status == 422
    assert none.json()["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "field": "spec.resourceAttributes",
         "message": "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be "
                    "specified"},
        {"reason": "FieldValueInvalid", "field": "spec.user",
         "message": 'Invalid value: "": at least one of user or group must be specified'}]
    assert none.json()["message"].startswith('SubjectAccessReview.authorization.k8s.io "" is invalid: ')
    local = server.request("POST", f"{AUTHZ}/namespaces/default/localsubjectaccessreviews", review(
        "LocalSubjectAccessReview", {"user": "u", "resourceAttributes": {"namespace": "other", "verb": "get"}}))
    assert local.status == 422
    assert local.json()["details"]["causes"][0]["field"] == "spec.resourceAttributes.namespace"
    rules = server.request("POST", f"{AUTHZ}/selfsubjectrulesreviews", review("SelfSubjectRulesReview", {}))
    assert rules.status == 400 and rules.json()["message"] == "no namespace on request"


def test_always_allow_answers(server):
    sar = server.request("POST", f"{AUTHZ}/subjectaccessreviews", review("SubjectAccessReview", {
        "user": "nobody", "resourceAttributes": {"verb": "delete", "resource": "nodes"}})).json()
    assert sar["status"] == {"allowed": True}
    assert server.kubectl("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
    listed = server.kubectl("auth", "can-i", "--list", "-n", "default").stdout
    assert "*.*" in listed and "[*]" in listed


def test_rbac_answers_with_reasons(rbac_server):
    def sar(user, groups, **attrs):
        body = review("SubjectAccessReview", {"user": user, "groups": groups, "resourceAttributes": attrs})
        out = rbac_server.request("POST", f"{AUTHZ}/subjectaccessreviews", body)
        assert out.status == 201, out.body
        return out.json()["status"]

    allowed = sar("alice", ["devs"], namespace="default", verb="get", resource="configmaps", name="one")
    assert allowed == {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "devs-read/default" of Role '
                                                  '"cm-reader" to Group "devs"'}
    denied = sar("alice", ["devs"], namespace="default", verb="get", resource="configmaps", name="two")
    assert denied == {"allowed": False,
                      "reason": 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found'}
    admin = sar("root", ["system:masters"], verb="delete", resource="nodes")
    assert admin == {"allowed": True}
    # alice asks about herself: system:basic-user lets every authenticated user do so.
    self_review = rbac_server.request("POST", f"{AUTHZ}/selfsubjectaccessreviews", review(
        "SelfSubjectAccessReview", {"resourceAttributes": {"namespace": "default", "verb": "list",
                                                           "resource": "configmaps"}}), token="alice-token")
    assert self_review.status == 201 and self_review.json()["status"]["allowed"] is False
    rules = rbac_server.request("POST", f"{AUTHZ}/selfsubjectrulesreviews", review(
        "SelfSubjectRulesReview", {"namespace": "default"}), token="alice-token").json()["status"]
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"],
            "resourceNames": ["one"]} in rules["resourceRules"]
    assert any("selfsubjectaccessreviews" in r.get("resources", []) for r in rules["resourceRules"])
    assert rules["incomplete"] is True
    assert rules["evaluationError"] == 'clusterrole.rbac.authorization.k8s.io "missing" not found'
    # Creating a SubjectAccessReview is itself authorized: alice may not ask about others.
    forbidden = rbac_server.request("POST", f"{AUTHZ}/subjectaccessreviews", review(
        "SubjectAccessReview", {"user": "x", "nonResourceAttributes": {"verb": "get", "path": "/"}}),
        token="alice-token")
    assert forbidden.status == 403
