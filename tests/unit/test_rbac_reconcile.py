"""Reconciling stored RBAC objects with the bootstrap policy (add what is missing, keep the rest)."""

from kube_apiserver.controlplane.rbacreconcile import (
    NONE,
    RECREATE,
    UPDATE,
    reconcile_binding,
    reconcile_role,
)

META = {"name": "r", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}
GET = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}


def test_roles_get_missing_rules_broken_down_and_keep_their_own():
    expected = {"metadata": META, "rules": [GET]}
    mine = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}
    existing = {"metadata": {"name": "r", "labels": {"team": "x"}}, "rules": [mine,
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    result = reconcile_role(existing, expected)
    assert result.operation == UPDATE and not result.protected
    assert result.obj["rules"][-1] == {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
    assert result.obj["rules"][0] == mine
    assert result.obj["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults", "team": "x"}
    assert reconcile_role(expected, expected).operation == NONE


def test_protected_and_aggregation_rules():
    protected = {"metadata": {**META, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "false"}}}
    result = reconcile_role(protected, {"metadata": META, "rules": [GET]})
    assert result.protected and result.operation == UPDATE
    selector = {"matchLabels": {"a": "b"}}
    aggregated = {"metadata": META, "aggregationRule": {"clusterRoleSelectors": [selector]}}
    result = reconcile_role({"metadata": META, "rules": [GET]}, aggregated)
    assert result.obj["aggregationRule"] == {"clusterRoleSelectors": [selector]} and result.operation == UPDATE
    assert "aggregationRule" not in reconcile_role(aggregated, {"metadata": META}).obj


def test_bindings():
    subject = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g"}
    expected = {"metadata": META, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                              "name": "r"}, "subjects": [subject]}
    other = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "u"}
    result = reconcile_binding({**expected, "subjects": [other]}, expected)
    assert result.operation == UPDATE and result.obj["subjects"] == [other, subject]
    moved = {**expected, "roleRef": {**expected["roleRef"], "name": "other"}}
    assert reconcile_binding(moved, expected).operation == RECREATE
    assert reconcile_binding(expected, expected).operation == NONE


def test_reconciling_leaves_the_stored_objects_as_they_were():
    """The result is a copy of what changes: the stored role and binding read from the API stay as read."""
    import copy

    existing = {"metadata": {"name": "r", "labels": {"team": "x"}}, "rules": [GET],
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}}
    expected = {"metadata": META, "rules": [GET, {"nonResourceURLs": ["/x"], "verbs": ["get"]}],
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"c": "d"}}]}}
    before = copy.deepcopy(existing)
    result = reconcile_role(existing, expected)
    assert result.operation == UPDATE and existing == before
    assert result.obj["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults", "team": "x"}
    assert len(result.obj["aggregationRule"]["clusterRoleSelectors"]) == 2 and len(result.obj["rules"]) == 2
    binding = {"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
               "name": "r"}, "subjects": [{"kind": "User", "name": "u"}]}
    wanted = {**binding, "metadata": META, "subjects": [{"kind": "Group", "name": "g"}]}
    before = copy.deepcopy(binding)
    assert reconcile_binding(binding, wanted).operation == UPDATE and binding == before
