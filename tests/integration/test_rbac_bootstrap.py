"""The rbac/bootstrap-roles post-start hook (the v1.34 bootstrap policy, reconciled on every start), the
clusterrole-aggregation controller, and what the default roles grant (kubectl auth can-i)."""

from __future__ import annotations

import json

import pytest

from conftest import Server, wait_for

RBAC = "/apis/rbac.authorization.k8s.io/v1"
# kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy testdata, v1.34 default feature gates
CLUSTER_ROLES = {
    "admin", "cluster-admin", "edit", "view", "system:aggregate-to-admin", "system:aggregate-to-edit",
    "system:aggregate-to-view", "system:auth-delegator", "system:basic-user",
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
    "system:certificates.k8s.io:kube-apiserver-client-approver",
    "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
    "system:certificates.k8s.io:kubelet-serving-approver", "system:certificates.k8s.io:legacy-unknown-approver",
    "system:discovery", "system:heapster", "system:kube-aggregator", "system:kube-controller-manager",
    "system:kube-dns", "system:kube-scheduler", "system:kubelet-api-admin", "system:monitoring", "system:node",
    "system:node-bootstrapper", "system:node-problem-detector", "system:node-proxier",
    "system:persistent-volume-provisioner", "system:public-info-viewer", "system:service-account-issuer-discovery",
    "system:volume-scheduler",
}
CONTROLLERS = {
    "attachdetach-controller", "certificate-controller", "clusterrole-aggregation-controller", "cronjob-controller",
    "daemon-set-controller", "deployment-controller", "disruption-controller", "endpoint-controller",
    "endpointslice-controller", "endpointslicemirroring-controller", "ephemeral-volume-controller",
    "expand-controller", "generic-garbage-collector", "horizontal-pod-autoscaler", "job-controller",
    "legacy-service-account-token-cleaner", "namespace-controller", "node-controller", "persistent-volume-binder",
    "pod-garbage-collector", "pv-protection-controller", "pvc-protection-controller", "replicaset-controller",
    "replication-controller", "resource-claim-controller", "resourcequota-controller", "root-ca-cert-publisher",
    "route-controller", "selinux-warning-controller", "service-account-controller", "service-cidrs-controller",
    "service-controller", "statefulset-controller", "ttl-after-finished-controller", "ttl-controller",
    "validatingadmissionpolicy-status-controller", "volumeattributesclass-protection-controller",
}
CLUSTER_ROLE_BINDINGS = {
    "cluster-admin", "system:basic-user", "system:discovery", "system:kube-controller-manager", "system:kube-dns",
    "system:kube-scheduler", "system:monitoring", "system:node", "system:node-proxier", "system:public-info-viewer",
    "system:service-account-issuer-discovery", "system:volume-scheduler",
}
NAMESPACED = {
    "kube-public/system:controller:bootstrap-signer", "kube-system/extension-apiserver-authentication-reader",
    "kube-system/system::leader-locking-kube-controller-manager", "kube-system/system::leader-locking-kube-scheduler",
    "kube-system/system:controller:bootstrap-signer", "kube-system/system:controller:cloud-provider",
    "kube-system/system:controller:token-cleaner",
}


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    srv = Server(str(tmp_path_factory.mktemp("rbacboot")), ["--authorization-mode=RBAC"]).start()
    yield srv
    srv.stop()


def names(server: Server, *args: str) -> set[str]:
    out = server.kubectl("get", *args, "-o", "json").stdout
    return {("{namespace}/{name}" if "-A" in args else "{name}").format(**i["metadata"])
            for i in json.loads(out)["items"]}


def rules_of(server: Server, name: str) -> list[dict]:
    return server.request("GET", f"{RBAC}/clusterroles/{name}").json().get("rules") or []


def test_kubectl_get_lists_the_v134_policy(rbac_server, kubectl_available):
    controllers = {f"system:controller:{c}" for c in CONTROLLERS}
    assert names(rbac_server, "clusterroles") == CLUSTER_ROLES | controllers
    assert names(rbac_server, "clusterrolebindings") == CLUSTER_ROLE_BINDINGS | controllers
    assert names(rbac_server, "roles", "-A") == NAMESPACED
    bindings = NAMESPACED - {"kube-system/extension-apiserver-authentication-reader"}
    assert names(rbac_server, "rolebindings", "-A") == bindings | {
        "kube-system/system::extension-apiserver-authentication-reader"}
    defaults = names(rbac_server, "clusterroles", "-l", "kubernetes.io/bootstrapping=rbac-defaults")
    assert defaults == CLUSTER_ROLES | controllers


def test_bootstrap_objects_are_upstreams(rbac_server):
    basic = rbac_server.request("GET", f"{RBAC}/clusterroles/system:basic-user").json()
    assert basic["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    assert basic["rules"] == [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}]
    node = rbac_server.request("GET", f"{RBAC}/clusterrolebindings/system:node").json()
    assert "subjects" not in node and node["roleRef"]["name"] == "system:node"
    gc = rbac_server.request("GET", f"{RBAC}/clusterrolebindings/system:controller:generic-garbage-collector").json()
    assert gc["subjects"] == [{"kind": "ServiceAccount", "name": "generic-garbage-collector",
                               "namespace": "kube-system"}]
    edit = rbac_server.request("GET", f"{RBAC}/clusterroles/edit").json()
    assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"] == "true"
    assert edit["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]}


def test_aggregated_roles_gather_their_parts(rbac_server):
    view = wait_for(lambda: rules_of(rbac_server, "view"))
    assert view == rules_of(rbac_server, "system:aggregate-to-view")
    wait_for(lambda: len(rules_of(rbac_server, "admin")) == 27)
    admin = rules_of(rbac_server, "admin")
    # selected roles are taken in name order: edit, then system:aggregate-to-admin
    assert admin[-2:] == rules_of(rbac_server, "system:aggregate-to-admin")
    assert admin[:-2] == rules_of(rbac_server, "edit")
    managers = rbac_server.request("GET", f"{RBAC}/clusterroles/view").json()["metadata"]["managedFields"]
    applied = [m for m in managers if m["operation"] == "Apply"]
    assert [m["manager"] for m in applied] == ["clusterrole-aggregation-controller"]
    assert applied[0]["fieldsV1"] == {"f:rules": {}}


def _account_token(server: Server, namespace: str, name: str, role: str) -> str:
    server.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": name}})
    binding = {"metadata": {"name": name}, "subjects": [{"kind": "ServiceAccount", "name": name}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}}
    assert server.request("POST", f"{RBAC}/namespaces/{namespace}/rolebindings", binding).status == 201
    created = server.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                             {"spec": {"expirationSeconds": 3600}})
    return created.json()["status"]["token"]


def can_i(server: Server, token: str, *args: str) -> str:
    return server.kubectl("auth", "can-i", *args, "--token", token, check=False).stdout.strip()


def test_can_i_for_service_accounts_bound_to_view_and_edit(rbac_server, kubectl_available):
    rbac_server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    wait_for(lambda: len(rules_of(rbac_server, "edit")) == 25)
    viewer = _account_token(rbac_server, "team", "viewer", "view")
    editor = _account_token(rbac_server, "team", "editor", "edit")
    assert can_i(rbac_server, viewer, "list", "pods", "-n", "team") == "yes"
    assert can_i(rbac_server, viewer, "get", "deployments.apps", "-n", "team") == "yes"
    assert can_i(rbac_server, viewer, "get", "secrets", "-n", "team") == "no"
    assert can_i(rbac_server, viewer, "create", "deployments.apps", "-n", "team") == "no"
    assert can_i(rbac_server, viewer, "list", "pods", "-n", "default") == "no"
    assert can_i(rbac_server, editor, "create", "deployments.apps", "-n", "team") == "yes"
    assert can_i(rbac_server, editor, "get", "secrets", "-n", "team") == "yes"
    assert can_i(rbac_server, editor, "create", "roles.rbac.authorization.k8s.io", "-n", "team") == "no"
    assert can_i(rbac_server, editor, "create", "resourceclaims.resource.k8s.io", "-n", "team") == "yes"
    # system:basic-user and system:discovery, bound to every authenticated user
    assert can_i(rbac_server, viewer, "create", "selfsubjectaccessreviews.authorization.k8s.io") == "yes"
    pods = rbac_server.request("GET", "/api/v1/namespaces/team/pods", token=viewer)
    assert pods.status == 200


def test_a_new_aggregate_to_view_role_joins_view_edit_and_admin(rbac_server, kubectl_available):
    viewer = _account_token(rbac_server, "default", "template-viewer", "view")
    assert can_i(rbac_server, viewer, "list", "podtemplates", "-n", "default") == "no"
    rule = {"apiGroups": [""], "resources": ["podtemplates"], "verbs": ["get", "list", "watch"]}
    role = {"metadata": {"name": "podtemplate-view",
                         "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}, "rules": [rule]}
    assert rbac_server.request("POST", f"{RBAC}/clusterroles", role).status == 201
    for name in ("view", "edit", "admin"):
        wait_for(lambda name=name: rule in rules_of(rbac_server, name))
    assert can_i(rbac_server, viewer, "list", "podtemplates", "-n", "default") == "yes"
    assert can_i(rbac_server, viewer, "list", "podtemplates", "-n", "kube-system") == "no"
    assert rbac_server.request("DELETE", f"{RBAC}/clusterroles/podtemplate-view").status == 200
    wait_for(lambda: rule not in rules_of(rbac_server, "view") and rule not in rules_of(rbac_server, "admin"))
    assert can_i(rbac_server, viewer, "list", "podtemplates", "-n", "default") == "no"


def test_aggregation_follows_the_selectors_and_ignores_the_role_itself(rbac_server):
    agg = {"metadata": {"name": "monitoring-all", "labels": {"team": "mon"}},
           "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "mon"}},
                                                        {"matchExpressions": [{"key": "extra", "operator": "Exists"}]}]}}
    part = {"metadata": {"name": "mon-part", "labels": {"team": "mon", "extra": "x"}},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}
    other = {"metadata": {"name": "mon-other", "labels": {"extra": "y"}},
             "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
                       {"nonResourceURLs": ["/debug"], "verbs": ["get"]}]}
    for obj in (agg, part, other):
        assert rbac_server.request("POST", f"{RBAC}/clusterroles", obj).status == 201
    expected = [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}, {"nonResourceURLs": ["/debug"], "verbs": ["get"]}]
    wait_for(lambda: rules_of(rbac_server, "monitoring-all") == expected)
    # a user's edit of an aggregated role's rules is put back
    patch = rbac_server.request("PATCH", f"{RBAC}/clusterroles/monitoring-all", {"rules": []},
                                {"Content-Type": "application/merge-patch+json"})
    assert patch.status == 200
    wait_for(lambda: rules_of(rbac_server, "monitoring-all") == expected)


def test_reconciliation_on_restart(tmp_path):
    srv = Server(str(tmp_path)).start()
    try:
        basic = srv.request("GET", f"{RBAC}/clusterroles/system:basic-user").json()
        mine = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
        basic["rules"] = [basic["rules"][0], mine]
        assert srv.request("PUT", f"{RBAC}/clusterroles/system:basic-user", basic).status == 200
        monitoring = srv.request("GET", f"{RBAC}/clusterroles/system:monitoring").json()
        monitoring["rules"] = []
        monitoring["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        assert srv.request("PUT", f"{RBAC}/clusterroles/system:monitoring", monitoring).status == 200
        binding = srv.request("GET", f"{RBAC}/clusterrolebindings/system:discovery").json()
        binding["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]
        del binding["metadata"]["labels"]
        assert srv.request("PUT", f"{RBAC}/clusterrolebindings/system:discovery", binding).status == 200
        assert srv.request("DELETE", f"{RBAC}/namespaces/kube-system/roles/system:controller:token-cleaner").status \
            == 200
    finally:
        srv.stop()
    srv = Server(str(tmp_path)).start()
    try:
        rules = srv.request("GET", f"{RBAC}/clusterroles/system:basic-user").json()["rules"]
        # the missing rule is added back, broken down as the reconciler computes it; the user's rule stays
        assert rules[:2] == basic["rules"] and {"apiGroups": ["authentication.k8s.io"],
                                                "resources": ["selfsubjectreviews"], "verbs": ["create"]} in rules
        assert srv.request("GET", f"{RBAC}/clusterroles/system:monitoring").json().get("rules") in (None, [])
        binding = srv.request("GET", f"{RBAC}/clusterrolebindings/system:discovery").json()
        assert binding["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
        assert [s["name"] for s in binding["subjects"]] == ["carol", "system:authenticated"]
        assert srv.request("GET", f"{RBAC}/namespaces/kube-system/roles/system:controller:token-cleaner").status \
            == 200
    finally:
        srv.stop()
