"""The clusterrole-aggregation controller's rule computation."""

from kube_apiserver.controllers.clusterroleaggregation import aggregated_rules

A = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
B = {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}


def role(name, labels=None, rules=None, selectors=None):
    obj = {"metadata": {"name": name, "labels": labels or {}}, "rules": rules or []}
    if selectors is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return obj


def test_union_in_selector_then_name_order_without_duplicates():
    agg = role("agg", {"x": "1"}, [B], [{"matchLabels": {"y": "1"}}, {"matchLabels": {"x": "1"}}])
    roles = {r["metadata"]["name"]: r for r in (
        agg, role("b-part", {"x": "1"}, [A, {**A, "resourceNames": []}]), role("a-part", {"y": "1", "x": "1"}, [B]),
        role("c-other", {"z": "1"}, [{"verbs": ["*"], "nonResourceURLs": ["*"]}]))}
    # a-part (first selector), then b-part; the aggregated role's own rules are not its source
    assert aggregated_rules(agg, roles) == [B, A]
    assert aggregated_rules(role("none", selectors=[]), roles) == []
