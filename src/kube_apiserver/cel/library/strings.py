"""cel-go's ext.Strings (version 2, as Kubernetes enables it): charAt, indexOf, lastIndexOf,
lowerAscii, upperAscii, replace, split, substring, trim, join, strings.quote, format.

Python strings index by code point, as cel-go's functions do (they work on []rune)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kube_apiserver.apimachinery.gostrconv import quote as go_quote
from kube_apiserver.cel.errors import LibraryError, NoSuchOverload
from kube_apiserver.cel.library.formatting import format_string


def _str(*values: Any) -> None:
    if any(type(value) is not str for value in values):
        raise NoSuchOverload()


def _int(*values: Any) -> None:
    if any(type(value) is not int for value in values):
        raise NoSuchOverload()


def char_at(text: Any, index: Any) -> str:
    _str(text)
    _int(index)
    if index < 0 or index > len(text):
        raise LibraryError(f"index out of range: {index}")
    return text[index] if index < len(text) else ""


def index_of(text: Any, sub: Any, offset: Any = 0) -> int:
    _str(text, sub)
    _int(offset)
    if offset < 0:
        raise LibraryError(f"index out of range: {offset}")
    if sub == "":
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def last_index_of(text: Any, sub: Any, *offset: Any) -> int:
    _str(text, sub)
    if not offset:
        if sub == "":
            return len(text)
        return text.rfind(sub)
    (start,) = offset
    _int(start)
    if start < 0:
        raise LibraryError(f"index out of range: {start}")
    if sub == "":
        return min(start, len(text))
    if start >= len(text):
        return -1
    # a match may begin at `start` at the latest
    return text.rfind(sub, 0, start + len(sub))


def _ascii(text: Any, convert: Callable[[str], str]) -> str:
    _str(text)
    return "".join(convert(ch) if ch < "\x80" else ch for ch in text) if not text.isascii() else convert(text)


def lower_ascii(text: Any) -> str:
    return _ascii(text, str.lower)


def upper_ascii(text: Any) -> str:
    return _ascii(text, str.upper)


def replace(text: Any, old: Any, new: Any, count: Any = -1) -> str:
    _str(text, old, new)
    _int(count)
    # strings.Replace: a negative count means every occurrence, as Python's does
    return text.replace(old, new, count if count >= 0 else -1)


def split(text: Any, sep: Any, limit: Any = -1) -> list[str]:
    """strings.SplitN: limit 0 gives no pieces, a negative limit all of them."""
    _str(text, sep)
    _int(limit)
    if limit == 0:
        return []
    if sep == "":
        chars = list(text)
        if 0 < limit < len(chars):
            return chars[:limit - 1] + ["".join(chars[limit - 1:])]
        return chars
    return text.split(sep, limit - 1 if limit > 0 else -1)


def substring(text: Any, start: Any, *end: Any) -> str:
    _str(text)
    _int(start, *end)
    if not end:
        if start < 0 or start > len(text):
            raise LibraryError(f"index out of range: {start}")
        return text[start:]
    (stop,) = end
    if start > stop:
        raise LibraryError(f"invalid substring range. start: {start}, end: {stop}")
    for index in (start, stop):
        if index < 0 or index > len(text):
            raise LibraryError(f"index out of range: {index}")
    return text[start:stop]


# unicode.IsSpace: Python's str.strip() would also strip \x1c-\x1f, which Go keeps
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def trim(text: Any) -> str:
    _str(text)
    return text.strip(_GO_SPACE)


def join(items: Any, sep: Any = "") -> str:
    if type(items) is not list:
        raise NoSuchOverload()
    _str(sep)
    for item in items:
        if type(item) is not str:
            raise LibraryError(f"join: invalid input: {item}")
    return sep.join(items)


def quote(text: Any) -> str:
    """strings.quote: the string as a double-quoted CEL literal. cel-go escapes only the named escapes
    (\\a \\b \\f \\n \\r \\t \\v \\\\ \\") and keeps every other rune as it is, unlike strconv.Quote."""
    _str(text)
    return go_quote(text, escape_unprintable=False)


def format_(text: Any, args: Any) -> str:
    _str(text)
    if type(args) is not list:
        raise NoSuchOverload()
    return format_string(text, args)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": char_at,
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii,
    "replace": replace,
    "split": split,
    "substring": substring,
    "trim": trim,
    "join": join,
    "strings.quote": quote,
    "format": format_,
}
