"""The v1 defaults (pkg/apis/flowcontrol/v1/defaults.go), applied to every object a request sends."""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
DEFAULT_MATCHING_PRECEDENCE = 1000
DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
DEFAULT_QUEUES = 64
DEFAULT_HAND_SIZE = 8
DEFAULT_QUEUE_LENGTH_LIMIT = 50


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def default_flow_schema(obj: Object) -> None:
    """SetDefaults_FlowSchemaSpec: a zero matchingPrecedence becomes 1000."""
    spec = _spec(obj)
    if not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = DEFAULT_MATCHING_PRECEDENCE


def default_priority_level(obj: Object) -> None:
    """SetObjectDefaults_PriorityLevelConfiguration: the limited and exempt sections, when present."""
    spec = _spec(obj)
    limited, exempt = spec.get("limited"), spec.get("exempt")
    if isinstance(limited, dict):
        _default_limited(limited)
    if isinstance(exempt, dict):
        _none_to(exempt, "nominalConcurrencyShares", 0)
        _none_to(exempt, "lendablePercent", 0)


def _default_limited(limited: Object) -> None:
    """SetDefaults_LimitedPriorityLevelConfiguration and SetDefaults_QueuingConfiguration."""
    _none_to(limited, "nominalConcurrencyShares", DEFAULT_NOMINAL_CONCURRENCY_SHARES)
    _none_to(limited, "lendablePercent", 0)
    response = limited.get("limitResponse")
    queuing = response.get("queuing") if isinstance(response, dict) else None
    if isinstance(queuing, dict):
        for key, value in (("queues", DEFAULT_QUEUES), ("handSize", DEFAULT_HAND_SIZE),
                           ("queueLengthLimit", DEFAULT_QUEUE_LENGTH_LIMIT)):
            if not queuing.get(key):
                queuing[key] = value


def _none_to(obj: Object, key: str, value: int) -> None:
    """A nil pointer field gets its default (a present zero stays)."""
    if obj.get(key) is None:
        obj[key] = value
