"""Rule coverage, compaction and the compact rendering used by the escalation checks."""

from kube_apiserver.api.rbac.covers import breakdown_rule, compact_rules, compact_string, covers

PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}


def test_breakdown_is_one_group_resource_verb_and_name_each():
    rule = {"apiGroups": ["", "apps"], "resources": ["x"], "resourceNames": ["a", "b"], "verbs": ["get"]}
    assert breakdown_rule(rule) == [
        {"apiGroups": [g], "resources": ["x"], "verbs": ["get"], "resourceNames": [n]}
        for g in ("", "apps") for n in ("a", "b")]
    assert breakdown_rule({"nonResourceURLs": ["/a", "/b"], "verbs": ["get"]}) == [
        {"nonResourceURLs": ["/a"], "verbs": ["get"]}, {"nonResourceURLs": ["/b"], "verbs": ["get"]}]


def test_covers():
    assert covers([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], [PODS]) == (True, [])
    held, missing = covers([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], [PODS])
    assert not held and missing == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    # */subresource covers every resource's subresource; a named rule covers only those names
    assert covers([{"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["get"]}],
                  [{"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["get"]}])[0]
    named = {"apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"], "verbs": ["get"]}
    assert covers([named], [named])[0] and not covers([named], [{**named, "resourceNames": []}])[0]
    assert covers([PODS], [named])[0]
    assert covers([{"nonResourceURLs": ["/api/*"], "verbs": ["get"]}],
                  [{"nonResourceURLs": ["/api/v1"], "verbs": ["get"]}])[0]
    assert not covers([{"nonResourceURLs": ["/api"], "verbs": ["get"]}],
                      [{"nonResourceURLs": ["/api/v1"], "verbs": ["get"]}])[0]


def test_compact_rules_merges_verbs_of_simple_rules():
    _, missing = covers([], [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["watch", "get"]},
                             {"nonResourceURLs": ["/x"], "verbs": ["get"]}])
    assert compact_rules(missing) == [
        {"nonResourceURLs": ["/x"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["watch", "get"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["watch", "get"]}]


def test_compact_string():
    assert compact_string(PODS) == '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}'
    assert compact_string({"nonResourceURLs": ["/a\"b"], "resourceNames": ["n"], "verbs": ["*"]}) == (
        '{NonResourceURLs:["/a\\"b"], ResourceNames:["n"], Verbs:["*"]}')


def test_a_rule_held_as_it_is_is_covered_as_its_breakdown_says():
    """Comparing whole rules first (a shortcut) agrees with the breakdown, including for a rule with both
    resource names and URLs, whose URL pieces the named rule itself does not cover."""
    named = {"apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"], "verbs": ["get"]}
    assert covers([PODS, named], [named, PODS]) == (True, [])
    odd = {"nonResourceURLs": ["/x"], "resourceNames": ["n"], "verbs": ["get"]}
    assert covers([odd], [odd]) == (False, [{"nonResourceURLs": ["/x"], "verbs": ["get"]}])
