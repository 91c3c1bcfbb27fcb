"""Specs as the internal Go types (pkg/apis/flowcontrol/types.go, no json tags): what an error shows as
the bad value (json.Marshal: Go field names, declaration order, nil as null), and what
apiequality.Semantic.DeepEqual compares (nil and empty slices alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...apimachinery.field import OrderedStruct
from .common import as_dict, as_int

Object = dict[str, Any]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _slice(value: Any, item: Callable[[Any], Any] = _str) -> list[Any] | None:
    return [item(v) for v in value] if isinstance(value, list) else None


def _ptr(value: Any, build: Callable[[Object], OrderedStruct]) -> OrderedStruct | None:
    return build(value) if isinstance(value, dict) else None


def _int_ptr(value: Any) -> int | None:
    return None if value is None else as_int(value)


def _named(value: Object) -> OrderedStruct:
    return OrderedStruct((("Name", _str(value.get("name"))),))


def distinguisher_struct(value: Object) -> OrderedStruct:
    return OrderedStruct((("Type", _str(value.get("type"))),))


def _service_account(value: Object) -> OrderedStruct:
    return OrderedStruct((("Namespace", _str(value.get("namespace"))), ("Name", _str(value.get("name")))))


def _subject(value: Any) -> OrderedStruct:
    subject = as_dict(value)
    return OrderedStruct((("Kind", _str(subject.get("kind"))), ("User", _ptr(subject.get("user"), _named)),
                          ("Group", _ptr(subject.get("group"), _named)),
                          ("ServiceAccount", _ptr(subject.get("serviceAccount"), _service_account))))


def _resource_rule(value: Any) -> OrderedStruct:
    rule = as_dict(value)
    return OrderedStruct((("Verbs", _slice(rule.get("verbs"))), ("APIGroups", _slice(rule.get("apiGroups"))),
                          ("Resources", _slice(rule.get("resources"))),
                          ("ClusterScope", rule.get("clusterScope") is True),
                          ("Namespaces", _slice(rule.get("namespaces")))))


def _non_resource_rule(value: Any) -> OrderedStruct:
    rule = as_dict(value)
    return OrderedStruct((("Verbs", _slice(rule.get("verbs"))),
                          ("NonResourceURLs", _slice(rule.get("nonResourceURLs")))))


def _rules(value: Any) -> OrderedStruct:
    rules = as_dict(value)
    return OrderedStruct((("Subjects", _slice(rules.get("subjects"), _subject)),
                          ("ResourceRules", _slice(rules.get("resourceRules"), _resource_rule)),
                          ("NonResourceRules", _slice(rules.get("nonResourceRules"), _non_resource_rule))))


def flow_schema_spec(spec: Object) -> OrderedStruct:
    """flowcontrol.FlowSchemaSpec."""
    return OrderedStruct((("PriorityLevelConfiguration", _named(as_dict(spec.get("priorityLevelConfiguration")))),
                          ("MatchingPrecedence", as_int(spec.get("matchingPrecedence"))),
                          ("DistinguisherMethod", _ptr(spec.get("distinguisherMethod"), distinguisher_struct)),
                          ("Rules", _slice(spec.get("rules"), _rules))))


def _queuing(value: Object) -> OrderedStruct:
    return OrderedStruct((("Queues", as_int(value.get("queues"))), ("HandSize", as_int(value.get("handSize"))),
                          ("QueueLengthLimit", as_int(value.get("queueLengthLimit")))))


def _limit_response(value: Object) -> OrderedStruct:
    return OrderedStruct((("Type", _str(value.get("type"))), ("Queuing", _ptr(value.get("queuing"), _queuing))))


def _limited(value: Object) -> OrderedStruct:
    return OrderedStruct((("NominalConcurrencyShares", as_int(value.get("nominalConcurrencyShares"))),
                          ("LimitResponse", _limit_response(as_dict(value.get("limitResponse")))),
                          ("LendablePercent", _int_ptr(value.get("lendablePercent"))),
                          ("BorrowingLimitPercent", _int_ptr(value.get("borrowingLimitPercent")))))


def _exempt(value: Object) -> OrderedStruct:
    return OrderedStruct((("NominalConcurrencyShares", _int_ptr(value.get("nominalConcurrencyShares"))),
                          ("LendablePercent", _int_ptr(value.get("lendablePercent")))))


def priority_level_spec(spec: Object) -> OrderedStruct:
    """flowcontrol.PriorityLevelConfigurationSpec."""
    return OrderedStruct((("Type", _str(spec.get("type"))), ("Limited", _ptr(spec.get("limited"), _limited)),
                          ("Exempt", _ptr(spec.get("exempt"), _exempt))))


def _canonical(value: Any) -> Any:
    if isinstance(value, OrderedStruct):
        return {key: _canonical(item) for key, item in value.items}
    if isinstance(value, list):
        return [_canonical(item) for item in value] or None
    return value


def semantic_equal(a: OrderedStruct, b: OrderedStruct) -> bool:
    """apiequality.Semantic.DeepEqual of two internal structs."""
    return bool(_canonical(a) == _canonical(b))
