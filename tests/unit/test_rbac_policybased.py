"""Helpers of the escalation checks: garbage-collector-only updates and aggregated resolution errors."""

from kube_apiserver.api.rbac.policybased import only_mutating_gc_fields
from kube_apiserver.api.rbac.resolver import aggregate_message

OLD = {"metadata": {"name": "r", "resourceVersion": "5", "finalizers": ["a"]},
       "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}


def test_only_mutating_gc_fields():
    new = {**OLD, "metadata": {**OLD["metadata"], "finalizers": [], "ownerReferences": [{"uid": "u"}],
                               "managedFields": [{"manager": "m"}]}}
    assert only_mutating_gc_fields(new, OLD)
    assert not only_mutating_gc_fields(new, None)
    assert not only_mutating_gc_fields({**new, "rules": []}, OLD)
    assert not only_mutating_gc_fields({**new, "metadata": {**new["metadata"], "labels": {"a": "b"}}}, OLD)
    # an empty list equals an absent one, as Go's semantic equality has it
    assert only_mutating_gc_fields({**OLD, "metadata": {**OLD["metadata"], "labels": {}}}, OLD)


def test_aggregate_message():
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"
