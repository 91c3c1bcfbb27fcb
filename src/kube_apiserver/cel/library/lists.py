"""List functions: Kubernetes' lists library (isSorted, sum, min, max, indexOf, lastIndexOf),
cel-go's ext.Lists version 3 (slice, flatten, sort, reverse, distinct, lists.range; sortBy is a
macro and cannot be added) and ext.Sets (sets.contains, sets.equivalent, sets.intersects)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kube_apiserver.cel.errors import INT_OVERFLOW, LibraryError, NoSuchOverload
from kube_apiserver.cel.values import compare, equal

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
_COMPARABLE = (int, float, bool, str, bytes, datetime, timedelta)


def _list(*values: Any) -> None:
    if any(type(value) is not list for value in values):
        raise NoSuchOverload()


def is_sorted(items: Any) -> bool:
    _list(items)
    return all(compare(a, b) != 1 for a, b in zip(items, items[1:], strict=False))


def sum_(items: Any) -> Any:
    """The sum of ints, doubles or durations; an empty list sums to 0."""
    _list(items)
    if not items:
        return 0
    kinds = {type(item) for item in items}
    if len(kinds) != 1 or kinds.pop() not in (int, float, timedelta):
        raise NoSuchOverload()
    total = sum(items[1:], items[0])
    if type(total) is int and not INT_MIN <= total <= INT_MAX:
        raise LibraryError(INT_OVERFLOW)
    return total


def _extreme(name: str, prefer: int) -> Callable[[Any], Any]:
    def pick(items: Any) -> Any:
        _list(items)
        if not items:
            raise LibraryError(f"{name} called on empty list")
        result = items[0]
        if type(result) not in _COMPARABLE:
            raise NoSuchOverload()
        for item in items[1:]:
            if compare(result, item) == prefer:
                result = item
        return result

    return pick


def index_of(items: Any, item: Any) -> int:
    _list(items)
    return next((i for i, value in enumerate(items) if equal(value, item)), -1)


def last_index_of(items: Any, item: Any) -> int:
    _list(items)
    return next((i for i in range(len(items) - 1, -1, -1) if equal(items[i], item)), -1)


# ---- ext.Lists ----


def slice_(items: Any, start: Any, end: Any) -> list[Any]:
    _list(items)
    if type(start) is not int or type(end) is not int:
        raise NoSuchOverload()
    if start < 0 or end < 0:
        raise LibraryError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise LibraryError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(items) < end:
        raise LibraryError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def flatten(items: Any, depth: Any = 1) -> list[Any]:
    _list(items)
    if type(depth) is not int:
        raise NoSuchOverload()
    if depth < 0:
        raise LibraryError("level must be non-negative")
    result: list[Any] = []
    for item in items:
        if type(item) is list and depth > 0:
            result.extend(flatten(item, depth - 1))
        else:
            result.append(item)
    return result


def sort(items: Any) -> list[Any]:
    _list(items)
    if not items:
        return items
    first = type(items[0])
    if first not in _COMPARABLE:
        raise LibraryError("list elements must be comparable")
    if any(type(item) is not first for item in items):
        raise LibraryError("list elements must have the same type")
    return sorted(items, key=functools.cmp_to_key(compare))


def reverse(items: Any) -> list[Any]:
    _list(items)
    return items[::-1]


def distinct(items: Any) -> list[Any]:
    _list(items)
    unique: list[Any] = []
    for item in items:
        if not any(equal(item, seen) for seen in unique):
            unique.append(item)
    return unique


def lists_range(count: Any) -> list[int]:
    if type(count) is not int:
        raise NoSuchOverload()
    return list(range(count))


# ---- ext.Sets ----


def _contains(items: list[Any], item: Any) -> bool:
    return any(equal(value, item) for value in items)


def sets_contains(items: Any, sub: Any) -> bool:
    _list(items, sub)
    return all(_contains(items, item) for item in sub)


def sets_equivalent(a: Any, b: Any) -> bool:
    _list(a, b)
    return all(_contains(b, item) for item in a) and all(_contains(a, item) for item in b)


def sets_intersects(a: Any, b: Any) -> bool:
    _list(a, b)
    return any(_contains(b, item) for item in a)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isSorted": is_sorted,
    "sum": sum_,
    "min": _extreme("min", 1),
    "max": _extreme("max", -1),
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "slice": slice_,
    "flatten": flatten,
    "sort": sort,
    "reverse": reverse,
    "distinct": distinct,
    "lists.range": lists_range,
    "sets.contains": sets_contains,
    "sets.equivalent": sets_equivalent,
    "sets.intersects": sets_intersects,
}
