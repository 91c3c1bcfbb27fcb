"""estimate_cost(): the static cost estimate, and size bounds derived from schemas."""

from __future__ import annotations

from kube_apiserver import cel
from kube_apiserver.cel.cost import (
    STATIC_ESTIMATED_COST_LIMIT,
    UNBOUNDED_LIST,
    cost_error_message,
    schema_sizes,
)


def test_simple_expressions_are_cheap() -> None:
    assert cel.estimate_cost("self.a < self.b").max < 10
    assert cel.estimate_cost("1 + 2").max == 1


def test_comprehension_scales_with_the_list_bound() -> None:
    small = cel.estimate_cost("self.items.all(x, x > 0)", {"self.items": 10}).max
    large = cel.estimate_cost("self.items.all(x, x > 0)", {"self.items": 1000}).max
    assert 10 < small < 100 and large > 50 * small


def test_nested_comprehensions_multiply() -> None:
    sizes = {"self.items": 100, "self.items[*].tags": 100}
    nested = cel.estimate_cost("self.items.all(x, x.tags.all(t, t != ''))", sizes).max
    assert nested >= 100 * 100


def test_unbounded_lists_use_the_request_size_bound() -> None:
    estimate = cel.estimate_cost("self.items.all(x, x > 0)")
    assert estimate.max > UNBOUNDED_LIST and estimate.exceeds(1_000_000)


def test_string_scans_scale_with_the_string_bound() -> None:
    short = cel.estimate_cost("self.name.matches('^a')", {"self.name": 10}).max
    long = cel.estimate_cost("self.name.matches('^a')", {"self.name": 100_000}).max
    assert long - short >= 9_000


def test_sizes_may_be_a_function() -> None:
    assert cel.estimate_cost("self.l.exists(x, x == 1)", lambda path: 5).max < 50


def test_schema_sizes() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 5}},
            "free": {"type": "array", "items": {"type": "integer"}},
            "labels": {"type": "object", "maxProperties": 3, "additionalProperties": {"type": "string"}},
            "when": {"type": "string", "format": "date-time"},
            "kind": {"type": "string", "enum": ["A", "Bee"]},
        },
    }
    sizes = schema_sizes(schema)
    assert sizes["self.items"] == 10 and sizes["self.items[*]"] == 20
    assert sizes["self.free"] == (3 * 1024 * 1024 - 2) // 2
    assert sizes["self.labels"] == 3 and sizes["self.when"] == 32 and sizes["self.kind"] == 3
    assert cel.estimate_cost("self.items.all(x, x.matches('a'))", sizes).max < 100


def test_cost_error_message() -> None:
    assert cost_error_message("estimated rule cost", 25_000_000, STATIC_ESTIMATED_COST_LIMIT) == (
        "estimated rule cost exceeds budget by factor of 2.5x (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)")
    assert "factor of more than 100x" in cost_error_message("x", 10**10)
    assert "factor of 1.100000x" in cost_error_message("x", 11_000_000)
