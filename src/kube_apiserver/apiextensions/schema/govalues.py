"""Go semantics of decoded JSON values that the OpenAPI validator relies on.

Custom resources decode numbers as Go does: integer literals to int64, others to float64 (Python
int and float). kube-openapi then compares with ``reflect.DeepEqual`` (int64(1) != float64(1)),
converts enum candidates with ``reflect.Value.Convert`` and formats with ``%v``.
"""

from __future__ import annotations

import math
from typing import Any

from ...apimachinery.field import format_bad_value

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
_MAX_JSON_FLOAT = float((1 << 53) - 1)
_EPSILON = 1e-9


def is_int(v: Any) -> bool:
    """A JSON value that Go decodes to int64."""
    return type(v) is int and INT64_MIN <= v <= INT64_MAX


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


def go_v(v: Any) -> str:
    """``fmt.Sprintf("%v", v)`` for a Go number, bool or string."""
    return v if isinstance(v, str) else format_bad_value(v)


def go_int64(f: float) -> int:
    """``int64(f)``: truncation toward zero, saturating where Go's result is undefined."""
    if math.isnan(f):
        return INT64_MIN
    if f >= 2.0**63:
        return INT64_MIN  # amd64 yields the "integer indefinite" value
    if f < -(2.0**63):
        return INT64_MIN
    return int(f)


def _go_uint64(f: float) -> float:
    """``float64(uint64(f))`` as amd64 computes it (negative values wrap through int64)."""
    if f >= 0:
        return float(int(f)) if f < 2.0**64 else 0.0
    return float(go_int64(f) % (1 << 64))


def is_json_integer(f: float) -> bool:
    """swag.IsFloat64AJSONInteger (go-openapi/swag v0.23)."""
    if math.isnan(f) or math.isinf(f) or f < -_MAX_JSON_FLOAT or f > _MAX_JSON_FLOAT:
        return False
    fa = abs(f)
    g = _go_uint64(f)
    diff = abs(f - g)
    if f == g or f == float(go_int64(f)):
        return True
    if f == 0 or g == 0 or diff < 5e-324:
        return diff < _EPSILON * 5e-324
    return diff / min(fa + abs(g), 1.7976931348623157e308) < _EPSILON


def deep_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` of two decoded JSON values (number types must agree)."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        return False
    if ta is dict:
        return len(a) == len(b) and all(k in b and deep_equal(v, b[k]) for k, v in a.items())
    if ta is list:
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _go_string_of_int(n: int) -> str:
    """``string(rune(n))``: invalid code points become U+FFFD."""
    if 0 <= n <= 0x10FFFF and not 0xD800 <= n <= 0xDFFF:
        return chr(n)
    return "\ufffd"


def enum_matches(data: Any, candidate: Any) -> bool:
    """One step of kube-openapi's enum check: DeepEqual after ``Value.Convert`` when convertible."""
    if candidate is None:
        return False  # reflect.TypeOf(nil) is nil: skipped
    if data is None:
        return False  # an invalid reflect.Value never matches
    td, tc = type(data), type(candidate)
    if td is tc:
        return deep_equal(data, candidate)
    if td is int and tc is float:
        return float(data) == candidate
    if td is float and tc is int:
        return go_int64(data) == candidate
    if td is int and tc is str:
        return _go_string_of_int(data) == candidate
    return False


def unique_items_ok(items: list[Any]) -> bool:
    for i, v in enumerate(items):
        for u in items[:i]:
            if deep_equal(v, u):
                return False
    return True
