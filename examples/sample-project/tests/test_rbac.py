"""An RBAC check: a user the server has just issued credentials for is refused until granted a role. The
fixture's server authorizes with RBAC (as envtest's kube-apiserver does)."""

from __future__ import annotations

from conftest import CONFIGMAPS


def test_a_user_is_forbidden_until_granted(kube_apiserver):
    alice = kube_apiserver.create_user("alice", groups=["developers"])

    refused = alice.request("GET", CONFIGMAPS)
    assert refused.status == 403
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"] == (
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" '
        'in the namespace "default"'
    )

    # grant returns once the authorizer applies the new RoleBinding
    kube_apiserver.grant(
        alice,
        rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        namespace="default",
    )
    assert alice.request("GET", CONFIGMAPS).status == 200
    # still nothing outside the granted namespace, nor other verbs
    assert alice.request("GET", "/api/v1/namespaces/kube-system/configmaps").status == 403
    assert alice.request("DELETE", f"{CONFIGMAPS}/anything").status == 403


def test_the_users_kubeconfig_works_with_the_kubernetes_client(kube_apiserver):
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    bob = kube_apiserver.create_user("bob")
    core = client.CoreV1Api(bob.api_client())
    try:
        core.list_namespace()
        raise AssertionError("bob listed namespaces without a grant")
    except ApiException as e:
        assert e.status == 403
    kube_apiserver.grant(bob, rules=[{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}])
    assert "default" in [ns.metadata.name for ns in core.list_namespace().items]
