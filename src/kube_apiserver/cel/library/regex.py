"""Kubernetes' regex library: `<string>.find(<regex>)` and `<string>.findAll(<regex>[, <limit>])`.

Patterns are Go RE2; Python's `re` is close, and the differences that change results on common
patterns are translated: `$` and `\\z` anchor at the very end of the text (Python's `$` also matches
before a final newline), `\\d \\w \\s \\b` are ASCII-only, `(?<name>` groups, `\\Q..\\E` quoting and
`[[:alpha:]]` classes. Unicode classes (`\\pL`) are not supported and report an illegal regex."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from kube_apiserver.cel.errors import LibraryError, NoSuchOverload

_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_POSIX_CLASS = re.compile(r"\[:(\^?)([a-z]+):\]")
_MULTILINE = re.compile(r"\(\?[a-zA-Z]*m")


def translate(pattern: str) -> str:
    """A Go RE2 pattern rewritten for Python's `re` (see the module docstring)."""
    out: list[str] = []
    pos, in_class = 0, False
    multiline = _MULTILINE.search(pattern) is not None
    while pos < len(pattern):
        ch = pattern[pos]
        if ch == "\\" and pos + 1 < len(pattern):
            pos = _escape(pattern, pos, out, in_class)
            continue
        if in_class and pattern.startswith("[:", pos):
            pos = _posix(pattern, pos, out)
            continue
        if ch == "[" and not in_class:
            in_class = True
            out.append(ch)
            if pattern.startswith("^]", pos + 1) or pattern.startswith("]", pos + 1):
                skip = 2 if pattern[pos + 1] == "^" else 1
                out.append(pattern[pos + 1:pos + 1 + skip].replace("]", "\\]"))
                pos += skip
        elif ch == "]" and in_class:
            in_class = False
            out.append(ch)
        elif ch == "$" and not in_class and not multiline:
            out.append(r"\Z")
        elif ch == "(" and pattern.startswith("(?<", pos) and not pattern.startswith(("(?<=", "(?<!"), pos):
            out.append("(?P<")
            pos += 2
        else:
            out.append(ch)
        pos += 1
    return "".join(out)


def _escape(pattern: str, pos: int, out: list[str], in_class: bool) -> int:
    nxt = pattern[pos + 1]
    if nxt == "z" and not in_class:
        out.append(r"\Z")
    elif nxt == "Q":
        end = pattern.find(r"\E", pos + 2)
        literal = pattern[pos + 2:] if end < 0 else pattern[pos + 2:end]
        out.append(re.escape(literal))
        return len(pattern) if end < 0 else end + 2
    elif nxt in "pP":
        raise re.error(f"invalid character class range: {pattern[pos:pos + 2]}")
    else:
        out.append(pattern[pos:pos + 2])
    return pos + 2


def _posix(pattern: str, pos: int, out: list[str]) -> int:
    match = _POSIX_CLASS.match(pattern, pos)
    if not match or match.group(2) not in _POSIX:
        raise re.error(f"invalid character class range: {pattern[pos:pos + 9]}")
    chars = _POSIX[match.group(2)]
    if match.group(1):
        # a negated class inside a class: Python has no nesting, so only the common standalone form works
        raise re.error(f"invalid character class range: {match.group()}")
    out.append(chars)
    return match.end()


@functools.lru_cache(maxsize=512)
def compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(translate(pattern), re.ASCII)
    except (re.error, RecursionError) as err:
        raise LibraryError(f"Illegal regex: error parsing regexp: {err}") from None


def _args(text: Any, pattern: Any) -> re.Pattern[str]:
    if type(text) is not str or type(pattern) is not str:
        raise NoSuchOverload()
    return compile_regex(pattern)


def find(text: Any, pattern: Any) -> str:
    match = _args(text, pattern).search(text)
    return match.group() if match else ""


def find_all(text: Any, pattern: Any, limit: Any = -1) -> list[str]:
    """FindAllString: like re.finditer, except that an empty match right after the previous match
    is skipped (Go's rule), and at most `limit` matches when it is non-negative."""
    regex = _args(text, pattern)
    if type(limit) is not int:
        raise NoSuchOverload()
    found: list[str] = []
    previous_end = -1
    for match in regex.finditer(text):
        if 0 <= limit <= len(found):
            break
        if match.start() == match.end() == previous_end:
            continue
        found.append(match.group())
        previous_end = match.end()
    return found


FUNCTIONS: dict[str, Callable[..., Any]] = {"find": find, "findAll": find_all}
