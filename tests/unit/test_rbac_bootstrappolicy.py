"""The v1.34 bootstrap policy data (checked against kubernetes' bootstrappolicy testdata)."""

from kube_apiserver.controlplane import bootstrappolicy as policy

BOOTSTRAP = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
             "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def everything():
    return (policy.cluster_roles() + policy.controller_roles() + policy.cluster_role_bindings()
            + policy.controller_role_bindings() + policy.namespace_roles() + policy.namespace_role_bindings())


def test_counts_and_unique_names():
    assert len(policy.cluster_roles()) == 31 and len(policy.cluster_role_bindings()) == 12
    assert len(policy.controller_roles()) == len(policy.controller_role_bindings()) == 37
    keys = [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in everything()]
    assert len(keys) == len(set(keys)) == 31 + 12 + 74 + 14


def test_every_object_carries_the_bootstrap_metadata_and_sorted_rules():
    for obj in everything():
        meta = obj["metadata"]
        assert meta["labels"].items() >= BOOTSTRAP["labels"].items() and meta["annotations"] == BOOTSTRAP["annotations"]
        for rule in obj.get("rules", []):
            for values in rule.values():
                assert values == sorted(set(values)) and values


def test_selected_roles_as_upstream_lists_them():
    roles = {r["metadata"]["name"]: r for r in policy.cluster_roles() + policy.controller_roles()}
    assert roles["system:kube-dns"]["rules"] == [
        {"apiGroups": [""], "resources": ["endpoints", "services"], "verbs": ["list", "watch"]}]
    assert roles["system:controller:clusterrole-aggregation-controller"]["rules"] == [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
         "verbs": ["escalate", "get", "list", "patch", "update", "watch"]}]
    assert roles["system:certificates.k8s.io:kubelet-serving-approver"]["rules"] == [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
         "resourceNames": ["kubernetes.io/kubelet-serving"], "verbs": ["approve"]}]
    assert "rules" not in roles["admin"] and roles["view"]["metadata"]["labels"] == {
        "rbac.authorization.k8s.io/aggregate-to-edit": "true", "kubernetes.io/bootstrapping": "rbac-defaults"}
    assert {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims", "resourceclaimtemplates"],
            "verbs": ["create", "delete", "deletecollection", "patch", "update"]} in \
        roles["system:aggregate-to-edit"]["rules"]


def test_bindings():
    bindings = {b["metadata"]["name"]: b for b in policy.cluster_role_bindings() + policy.controller_role_bindings()}
    assert bindings["system:public-info-viewer"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"},
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"}]
    assert "subjects" not in bindings["system:node"]
    assert bindings["system:controller:job-controller"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "job-controller", "namespace": "kube-system"}]
    assert policy.cluster_role_bindings_to_split()["system:discovery"]["metadata"]["name"] == \
        "system:public-info-viewer"
