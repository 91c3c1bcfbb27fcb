"""JSON nested deeper than orjson goes. Go's decoder accepts 10,000 levels of nesting (encoding/json's
maxNestingDepth; deeper is a syntax error) and its encoder has no limit, while orjson reads 1,024 levels and
writes 254. Documents beyond orjson's limits, which are rare, go through the standard library's json, and every
walk of an object (defaulting, validation, pruning, managed fields, equality, copies) recurses once or a few
times per level: the interpreter's recursion limit is raised, once, when this module is imported, so that
10,000 levels fit."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import orjson

MAX_DEPTH = 10_000
# A few frames per level of the deepest document Go accepts, plus the server's own call depth. Python's own
# frames do not use the C stack (3.11), so this is about walks, not the thread's stack.
RECURSION_LIMIT = 4 * MAX_DEPTH + 2_000
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


class TooDeep(ValueError):
    """encoding/json's SyntaxError for a document nested more than MAX_DEPTH levels."""

    def __init__(self, bracket: str):
        super().__init__(f"invalid character '{bracket}' exceeded max depth")


def ensure_recursion_limit() -> None:
    """Raises the interpreter's recursion limit to RECURSION_LIMIT (never lowers it)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


ensure_recursion_limit()  # before any object is walked: a document orjson reads may still be 1,024 deep


def _check_depth(body: bytes) -> None:
    """Raises TooDeep at the first bracket that opens level MAX_DEPTH + 1 (strings do not count)."""
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", body))
    depth = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        if depth > MAX_DEPTH:
            raise TooDeep(chr(byte))


def outside_strings(body: bytes) -> bytes:
    """A JSON document without its strings (their quotes included)."""
    return _STRING.sub(b"", body)


def nesting(unquoted: bytes) -> int:
    """How many levels of brackets a JSON document (as outside_strings leaves it) nests at its deepest."""
    brackets = _NOT_BRACKET.sub(b"", unquoted)
    deepest = depth = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def loads(body: bytes | str) -> Any:
    """orjson.loads, and as Go does beyond orjson's 1,024 levels (up to MAX_DEPTH, then TooDeep). Other
    errors are orjson.JSONDecodeError."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as err:
        if "depth" not in str(err):
            raise
        data = body.encode() if isinstance(body, str) else body
        _check_depth(data)
        ensure_recursion_limit()
        try:
            return json.loads(data)
        except ValueError as fallback:
            raise orjson.JSONDecodeError(str(fallback), fallback.doc, fallback.pos) from None  # type: ignore[attr-defined]


def dumps(value: Any, option: int | None = None) -> bytes:
    """orjson.dumps, and beyond its 254 levels or 64-bit integers the standard library's compact form (the same
    JSON)."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as err:
        # An integer beyond 64 bits (YAML reads them; orjson writes none) is written as the standard library does.
        if "Recursion" not in str(err) and "64-bit" not in str(err):
            raise
        ensure_recursion_limit()
        flags = option or 0
        indent = 2 if flags & orjson.OPT_INDENT_2 else None
        text = json.dumps(value, ensure_ascii=False, indent=indent, separators=(",", ": ") if indent else (",", ":"),
                          sort_keys=bool(flags & orjson.OPT_SORT_KEYS))
        return text.encode() + (b"\n" if flags & orjson.OPT_APPEND_NEWLINE else b"")
