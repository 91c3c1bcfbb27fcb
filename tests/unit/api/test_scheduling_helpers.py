"""The scheduling helpers: node selector operators as labels.Selector evaluates them, matchFields on
metadata.name, nodeSelector plus required affinity, tolerations against taints."""

from __future__ import annotations

from kube_apiserver.api.core import scheduling_helpers as sh

NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "cpus": "8"}}}


def _req(key: str, op: str, *values: str) -> dict:
    return {"key": key, "operator": op, "values": list(values)}


def test_requirement_operators() -> None:
    labels = NODE["metadata"]["labels"]
    assert sh.requirement_matches(_req("zone", "In", "a", "b"), labels)
    assert not sh.requirement_matches(_req("zone", "NotIn", "a"), labels)
    assert sh.requirement_matches(_req("missing", "NotIn", "a"), labels)
    assert sh.requirement_matches(_req("missing", "DoesNotExist"), labels)
    assert sh.requirement_matches(_req("cpus", "Gt", "4"), labels)
    assert not sh.requirement_matches(_req("cpus", "Lt", "4"), labels)
    assert not sh.requirement_matches(_req("zone", "Gt", "4"), labels)
    assert not sh.requirement_matches(_req("zone", "Bogus", "a"), labels)


def test_terms_are_ored_and_an_empty_term_matches_nothing() -> None:
    selector = {"nodeSelectorTerms": [{}, {"matchFields": [_req("metadata.name", "In", "n1")]}]}
    assert sh.node_selector_matches(selector, NODE)
    assert not sh.node_selector_matches({"nodeSelectorTerms": [{}]}, NODE)
    assert not sh.term_matches({"matchFields": [_req("metadata.labels", "In", "n1")]}, NODE)


def test_node_selector_and_required_affinity_both_apply() -> None:
    pod = {"spec": {"nodeSelector": {"zone": "a"}}}
    assert sh.required_node_affinity_matches(pod, NODE)
    term = {"matchExpressions": [_req("zone", "In", "b")]}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    assert not sh.required_node_affinity_matches(pod, NODE)
    assert not sh.required_node_affinity_matches({"spec": {"nodeSelector": {"zone": "b"}}}, NODE)


def test_tolerations() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    assert sh.tolerates({"key": "k", "operator": "Equal", "value": "v"}, taint)
    assert sh.tolerates({"key": "k", "value": "v", "effect": "NoSchedule"}, taint)
    assert not sh.tolerates({"key": "k", "value": "w"}, taint)
    assert not sh.tolerates({"key": "k", "operator": "Exists", "effect": "NoExecute"}, taint)
    assert sh.tolerates({"operator": "Exists"}, taint)
    soft = {"key": "s", "effect": "PreferNoSchedule"}
    assert sh.untolerated_taint([soft, taint], []) is taint
    assert sh.untolerated_taint([soft, taint], [{"key": "k", "operator": "Exists"}]) is None
