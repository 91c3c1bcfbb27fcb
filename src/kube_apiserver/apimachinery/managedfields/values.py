"""JSON values as structured-merge-diff orders, compares and prints them.

A value is frozen into a hashable, totally ordered tuple whose order is SMD's value.Compare:
numbers (ints and floats compare numerically) < strings < booleans < lists < maps < null."""

from __future__ import annotations

import re
from typing import Any

from ..gostrconv import format_float, format_json_float, quote

Frozen = tuple[Any, ...]

NUMBER, STRING, BOOL, LIST, MAP, NULL = range(6)


class _Absent:
    """A field or item that is not there at all (SMD's nil Value), unlike JSON null."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


def freeze(value: Any) -> Frozen:
    if value is None:
        return (NULL,)
    if isinstance(value, bool):
        return (BOOL, value)
    if isinstance(value, int | float):
        return (NUMBER, value)
    if isinstance(value, str):
        return (STRING, value)
    if isinstance(value, list):
        return (LIST, tuple(freeze(item) for item in value))
    if isinstance(value, dict):
        return (MAP, tuple(sorted((key, freeze(item)) for key, item in value.items())))
    raise TypeError(f"not a JSON value: {value!r}")


def thaw(frozen: Frozen) -> Any:
    tag = frozen[0]
    if tag == NULL:
        return None
    if tag == LIST:
        return [thaw(item) for item in frozen[1]]
    if tag == MAP:
        return {key: thaw(item) for key, item in frozen[1]}
    return frozen[1]


def equal(a: Any, b: Any) -> bool:
    """value.Equals: deep equality where 1 == 1.0 but true != 1."""
    if a is ABSENT or b is ABSENT:
        return a is b
    return freeze(a) == freeze(b)


# ---- printing as Go does ----

def to_string(value: Any) -> str:
    """value.ToString, used in path element names such as [name="nginx"]."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[" + ",".join(to_string(item) for item in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{key}={to_string(item)}" for key, item in value.items())
    return "{{undefined}}"


# ---- JSON as SMD's json-iterator writes it (compatible with encoding/json, HTML-escaped) ----

_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


# Text with nothing to escape (most names and values): written as it is.
_PLAIN = re.compile(r'[^"\\<>&\x00-\x1f\u2028\u2029]*')


def go_json_string(text: str) -> str:
    if _PLAIN.fullmatch(text):
        return '"' + text + '"'
    return escaped_json_string(text)


def escaped_json_string(text: str) -> str:
    """go_json_string character by character (what it does for text with something to escape)."""
    out = []
    for char in text:
        escaped = _JSON_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def go_json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_json_float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{go_json_string(k)}:{go_json(v)}" for k, v in items) + "}"
    raise TypeError(f"not a JSON value: {value!r}")
