"""Go regular expressions (RE2 syntax) for ``pattern`` and the string formats.

Go's regexp is RE2, so the ``google-re2`` bindings give the same language and the same
linear-time matching; compile errors are reworded to Go's ``regexp/syntax`` messages
("error parsing regexp: missing closing ): `(a`"). Without the bindings, Python's ``re`` is
used on a translated pattern (``$``/``\\z`` mean end of text in Go) - close, not exact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

try:  # pragma: no cover - depends on the environment
    import re2 as _re2

    _OPTIONS = _re2.Options()
    _OPTIONS.log_errors = False
except ImportError:  # pragma: no cover
    _re2 = None

Matcher = Callable[[str], Any]

# RE2's error texts -> Go's regexp/syntax ErrorCode texts
_GO_CODES = (
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("missing )", "missing closing )"),
    ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid named capture group", "invalid named capture"),
    ("duplicate capture group name", "duplicate capture group name"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("pattern too large", "expression too large"),
)


def _go_error(message: str) -> str:
    if message.startswith("trailing \\"):
        return "error parsing regexp: trailing backslash at end of expression: ``"
    code, _, expr = message.partition(": ")
    for re2_code, go_code in _GO_CODES:
        if code.startswith(re2_code):
            return f"error parsing regexp: {go_code}: `{expr}`"
    return f"error parsing regexp: {message}"


@lru_cache(maxsize=4096)
def compile_go_regexp(pattern: str) -> tuple[Matcher | None, str | None]:
    """(search function, None) or (None, Go's compile error text) for a Go regexp."""
    if _re2 is not None:
        try:
            return _re2.compile(pattern, options=_OPTIONS).search, None
        except _re2.error as err:
            text = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
            return None, _go_error(text)
    try:
        return re.compile(_translate(pattern)).search, None
    except re.error as err:
        return None, f"error parsing regexp: {err}"


def _translate(pattern: str) -> str:
    """RE2 -> Python ``re`` for the constructs whose meaning differs."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append("\\Z" if nxt == "z" and not in_class else ch + nxt)
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif ch == "$" and not in_class:
            ch = "\\Z"
        elif pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
            ch, i = "(?P<", i + 2
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def go_regexp_test(pattern: str) -> tuple[Callable[[str], bool] | None, str | None]:
    """(whether a string contains a match, None) or (None, Go's compile error text): what a schema's `pattern`
    asks, once per string of a document (50,000 times for a big array)."""
    search, err = compile_go_regexp(pattern)
    if search is None:
        return None, err
    raw = getattr(_re2.compile(pattern, options=_OPTIONS), "_regexp", None) if _re2 is not None else None
    anchor = getattr(getattr(_re2, "_Anchor", None), "UNANCHORED", None)
    if raw is None or anchor is None or not hasattr(raw, "Match"):
        return lambda text: search(text) is not None, None

    def contains_match(text: str) -> bool:
        # The bindings' RE2 itself: their search builds a match object, with its offsets in characters, that a
        # yes or no does not need (five times the cost). UTF-8, as their search encodes the text.
        data = text.encode("utf-8")
        return raw.Match(anchor, data, 0, len(data))[0] != _NO_MATCH

    return contains_match, None


_NO_MATCH = (-1, -1)


def matcher(pattern: str) -> Matcher:
    """A search function for a pattern known to compile."""
    search, err = compile_go_regexp(pattern)
    if search is None:
        raise ValueError(err)
    return search
