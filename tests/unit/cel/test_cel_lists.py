"""Kubernetes' lists library, cel-go ext.Lists and ext.Sets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize(("expression", "expected"), [
    ("[1, 2, 3].isSorted()", True), ("['a', 'b', 'b', 'c'].isSorted()", True), ("[2.0, 1.0].isSorted()", False),
    ("[].isSorted()", True), ("[false, true].isSorted()", True),
    ("[1, 2, 3].sum()", 6), ("[1.0, 2.5].sum()", 3.5), ("[].sum()", 0),
    ("[duration('1s'), duration('2s')].sum() == duration('3s')", True),
    ("[1, 2, 3].min()", 1), ("[1, 2, 3].max()", 3), ("['d', 'a', 'c'].max()", "d"), ("[1, 2.5].max()", 2.5),
    ("[1, 2, 3, 2].indexOf(2)", 1), ("[1, 2, 3, 2].lastIndexOf(2)", 3), ("[1, 2].indexOf(9)", -1),
    ("[[1], [2]].indexOf([2])", 1), ("[true, 1].indexOf(1)", 1),
    ("[1, 2, 3, 4].slice(1, 3)", [2, 3]), ("[1, [2, [3, 4]]].flatten()", [1, 2, [3, 4]]),
    ("[1, [2, [3, 4]]].flatten(2)", [1, 2, 3, 4]), ("[3, 1, 2].sort()", [1, 2, 3]),
    ("['b', 'a'].sort()", ["a", "b"]), ("[1, 2, 3].reverse()", [3, 2, 1]),
    ("[1, 2, 2.0, 'a', 'a', [1], [1]].distinct()", [1, 2, "a", [1]]), ("lists.range(4)", [0, 1, 2, 3]),
    ("sets.contains([1, 2, 3], [3, 1])", True), ("sets.contains([1, 2], [3])", False),
    ("sets.contains([1], [1.0])", True), ("sets.contains([1], [true])", False),
    ("sets.equivalent([1, 2, 2], [2, 1])", True), ("sets.equivalent([1], [1, 2])", False),
    ("sets.intersects([1, 2], [2, 3])", True), ("sets.intersects([1], [])", False),
])
def test_lists(ev: Callable[..., Any], expression: str, expected: object) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("[].min()", "min called on empty list"), ("[].max()", "max called on empty list"),
    ("[1, 'a'].isSorted()", "no such overload"), ("[1, 2.5].sum()", "no such overload"),
    ("[9223372036854775807, 1].sum()", "integer overflow"),
    ("[1, 2].slice(-1, 1)", "cannot slice(-1, 1), negative indexes not supported"),
    ("[1, 2].slice(2, 1)", "cannot slice(2, 1), start index must be less than or equal to end index"),
    ("[1, 2].slice(0, 3)", "cannot slice(0, 3), list is length 2"),
    ("[1].flatten(-1)", "level must be non-negative"),
    ("[1, 'a'].sort()", "list elements must have the same type"),
    ("[[1], [2]].sort()", "list elements must be comparable"),
    ("'abc'.sum()", "no such overload"),
])
def test_list_errors(err: Callable[..., str], expression: str, message: str) -> None:
    assert err(expression) == message


def test_on_object_lists(ev: Callable[..., Any]) -> None:
    self = {"ports": [80, 443, 8080], "names": ["a", "b"]}
    assert ev("self.ports.isSorted() && self.ports.max() < 65536 && self.names.indexOf('b') == 1", self=self)
