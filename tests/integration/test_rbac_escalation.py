"""Escalation prevention with --authorization-mode=RBAC: roles may only grant what their author holds
unless it may `escalate`; bindings need the role's permissions or `bind` on it; system:masters is never
checked (kube-apiserver's policy-based rbac storage)."""

from __future__ import annotations

import pytest

from conftest import Server

RBAC = "/apis/rbac.authorization.k8s.io/v1"
GROUP = "rbac.authorization.k8s.io"
ALICE = 'user "alice" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:'


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("escalation")
    tokens = data / "tokens.csv"
    tokens.write_text('alice-token,alice,1001,"devs"\n')
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(tokens)]).start()
    # alice manages RBAC objects, and may read pods in "default"
    grant(srv, "rbac-manager", [{"apiGroups": [GROUP], "resources": ["roles", "rolebindings", "clusterroles",
                                                                      "clusterrolebindings"],
                                 "verbs": ["create", "get", "list", "update", "patch", "delete"]}])
    pod_reader = {"metadata": {"name": "pod-reader"},
                  "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    assert srv.request("POST", f"{RBAC}/namespaces/default/roles", pod_reader).status == 201
    assert srv.request("POST", f"{RBAC}/namespaces/default/rolebindings", binding("alice-pods", "Role", "pod-reader",
                                                                                  "User", "alice")).status == 201
    yield srv
    srv.stop()


def binding(name: str, kind: str, role: str, subject_kind: str = "Group", subject: str = "devs") -> dict:
    return {"metadata": {"name": name}, "subjects": [{"kind": subject_kind, "name": subject}],
            "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role}}


def grant(server: Server, name: str, rules: list[dict]) -> None:
    """As the admin (system:masters, never checked): rules bound cluster-wide to the devs group."""
    assert server.request("POST", f"{RBAC}/clusterroles", {"metadata": {"name": name}, "rules": rules}).status == 201
    assert server.request("POST", f"{RBAC}/clusterrolebindings", binding(name, "ClusterRole", name)).status == 201


def as_alice(server: Server, method: str, path: str, body: dict | None = None, **kw):
    return server.request(method, path, body, token="alice-token", **kw)


def cluster_role(name: str, *rules: dict) -> dict:
    return {"metadata": {"name": name}, "rules": list(rules)}


PODS_GET = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}


def test_creating_a_role_with_rules_not_held_is_refused(rbac_server):
    refused = as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", cluster_role("x", PODS_GET))
    assert refused.status == 403
    assert refused.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'clusterroles.rbac.authorization.k8s.io "x" is forbidden: {ALICE}\n'
                   '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}',
        "reason": "Forbidden", "details": {"name": "x", "group": GROUP, "kind": "clusterroles"}, "code": 403}
    # in "default" alice holds get on pods (a RoleBinding), not list; the missing verbs are compacted
    role = {"metadata": {"name": "pods"}, "rules": [{"apiGroups": [""], "resources": ["pods", "services"],
                                                      "verbs": ["get", "list", "watch"]}]}
    refused = as_alice(rbac_server, "POST", f"{RBAC}/namespaces/default/roles", role)
    assert refused.status == 403 and refused.json()["message"] == (
        f'roles.rbac.authorization.k8s.io "pods" is forbidden: {ALICE}\n'
        '{APIGroups:[""], Resources:["pods"], Verbs:["list" "watch"]}\n'
        '{APIGroups:[""], Resources:["services"], Verbs:["get" "list" "watch"]}')
    held = {"metadata": {"name": "pods"}, "rules": [PODS_GET]}
    assert as_alice(rbac_server, "POST", f"{RBAC}/namespaces/default/roles", held).status == 201
    # the same role elsewhere grants what alice does not hold there
    assert as_alice(rbac_server, "POST", f"{RBAC}/namespaces/kube-public/roles", held).status == 403


def test_rules_held_cluster_wide_and_urls(rbac_server):
    manage_roles = {"apiGroups": [GROUP], "resources": ["roles"], "verbs": ["get", "list"]}
    assert as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", cluster_role("role-readers", manage_roles)).status \
        == 201
    # system:discovery grants /api/* to every authenticated user, nothing grants /metrics
    urls = {"nonResourceURLs": ["/api/v1", "/metrics"], "verbs": ["get"]}
    refused = as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", cluster_role("urls", urls))
    assert refused.json()["message"].endswith(f'{ALICE}\n{{NonResourceURLs:["/metrics"], Verbs:["get"]}}')
    named = {"apiGroups": [GROUP], "resources": ["roles"], "resourceNames": ["a", "b"], "verbs": ["bind"]}
    refused = as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", cluster_role("named", named))
    assert refused.json()["message"].endswith(
        f'{ALICE}\n{{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], ResourceNames:["a"], Verbs:['
        f'"bind"]}}\n{{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], ResourceNames:["b"], '
        f'Verbs:["bind"]}}')


def test_updates_are_checked_but_garbage_collector_fields_are_not(rbac_server):
    path = f"{RBAC}/clusterroles/reader"
    assert as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", cluster_role("reader", {
        "apiGroups": [GROUP], "resources": ["roles"], "verbs": ["get"]})).status == 201
    merge = {"Content-Type": "application/merge-patch+json"}
    refused = as_alice(rbac_server, "PATCH", path, {"rules": [PODS_GET]}, headers=merge)
    assert refused.status == 403 and refused.json()["message"] == (
        f'clusterroles.rbac.authorization.k8s.io "reader" is forbidden: {ALICE}\n'
        '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}')
    # a role alice could never have written: she may still touch what the garbage collector needs
    assert rbac_server.request("POST", f"{RBAC}/clusterroles", cluster_role("wide", PODS_GET)).status == 201
    finalizers = {"metadata": {"finalizers": ["example.com/keep"]}}
    assert as_alice(rbac_server, "PATCH", f"{RBAC}/clusterroles/wide", finalizers, headers=merge).status == 200
    labels = {"metadata": {"labels": {"a": "b"}}}
    assert as_alice(rbac_server, "PATCH", f"{RBAC}/clusterroles/wide", labels, headers=merge).status == 403
    rbac_server.request("PATCH", f"{RBAC}/clusterroles/wide", {"metadata": {"finalizers": None}}, headers=merge)


def test_aggregation_rules_need_every_permission(rbac_server):
    agg = {"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}}
    refused = as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", agg)
    assert refused.status == 403 and refused.json()["message"] == (
        'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the '
        'aggregationRule')
    assert rbac_server.request("POST", f"{RBAC}/clusterroles", agg).status == 201


def test_bindings_need_the_roles_permissions_or_bind(rbac_server):
    path = f"{RBAC}/namespaces/default/rolebindings"
    # alice holds get on pods in "default": binding pod-reader there is no escalation
    assert as_alice(rbac_server, "POST", path, binding("pods-for-devs", "Role", "pod-reader")).status == 201
    refused = as_alice(rbac_server, "POST", path, binding("devs-view", "ClusterRole", "view"))
    message = refused.json()["message"]
    assert refused.status == 403 and message.startswith(
        f'rolebindings.rbac.authorization.k8s.io "devs-view" is forbidden: {ALICE}\n')
    assert '{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "list" "watch"]}' in message.splitlines()
    missing = as_alice(rbac_server, "POST", path, binding("ghost", "ClusterRole", "no-such-role"))
    assert missing.status == 403 and missing.json()["message"] == (
        'rolebindings.rbac.authorization.k8s.io "ghost" is forbidden: clusterroles.rbac.authorization.k8s.io '
        '"no-such-role" not found')
    cluster = as_alice(rbac_server, "POST", f"{RBAC}/clusterrolebindings", binding("devs-view", "ClusterRole", "view"))
    assert cluster.status == 403 and cluster.json()["message"].startswith(
        'clusterrolebindings.rbac.authorization.k8s.io "devs-view" is forbidden: user "alice"')
    # bind on that one ClusterRole, in rolebindings (namespaced) and clusterrolebindings alike
    grant(rbac_server, "bind-view", [{"apiGroups": [GROUP], "resources": ["clusterroles"], "verbs": ["bind"],
                                      "resourceNames": ["view"]}])
    assert as_alice(rbac_server, "POST", path, binding("devs-view", "ClusterRole", "view")).status == 201
    assert as_alice(rbac_server, "POST", f"{RBAC}/clusterrolebindings",
                    binding("devs-view", "ClusterRole", "view")).status == 201
    assert as_alice(rbac_server, "POST", path, binding("devs-edit", "ClusterRole", "edit")).status == 403


def test_escalate_allows_writing_any_rules(rbac_server):
    grant(rbac_server, "escalate-roles", [{"apiGroups": [GROUP], "resources": ["clusterroles"],
                                           "verbs": ["escalate"]}])
    assert as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", cluster_role("x", PODS_GET)).status == 201
    agg = {"metadata": {"name": "agg2"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}}
    assert as_alice(rbac_server, "POST", f"{RBAC}/clusterroles", agg).status == 201
    # escalate is per resource: roles are still checked
    role = {"metadata": {"name": "secrets"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}
    assert as_alice(rbac_server, "POST", f"{RBAC}/namespaces/default/roles", role).status == 403
