"""The parts of its variables an expression reads, so that evaluation hands the interpreter only those:
the interpreter converts every value it is given (microseconds per string) and copies maps on
access, which makes the size of `self` dominate an evaluation.

A trie per variable maps field names to sub-tries, ELEMENTS to the trie of every list element
(`self.items.all(x, x.name != '')` reads only `name` of each item), and WHOLE marks a value used as a
whole (`self == oldSelf`, `self.items.size()`, `self[k]`, `self.?f`, `self.items.filter(...)`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from kube_apiserver.cel.lexer import IDENT, PUNCT, Token, matching

WHOLE = None
ELEMENTS = ("*",)  # not a string, so no field name can collide with it
# macros whose result holds no element of the iterated list (filter's result does)
_ELEMENTWISE = frozenset({"all", "exists", "exists_one", "map"})


def _text(tokens: list[Token], index: int) -> str:
    return tokens[index].text if 0 <= index < len(tokens) and tokens[index].kind == PUNCT else ""


def field_paths(tokens: list[Token], variables: Collection[str], bound: Collection[str]) -> dict[str, Any]:
    """Per free variable, the trie of what the expression reads of it; `bound` are the comprehension
    variables (a variable shadowed by one is passed whole, to keep this simple)."""
    return {name: WHOLE if name in bound else _reads(tokens, name, 0, len(tokens)) for name in variables}


def _reads(tokens: list[Token], name: str, start: int, end: int) -> Any:
    """The trie of the uses of identifier `name` among tokens[start:end]."""
    trie: Any = {}
    for i in range(start, end):
        token = tokens[i]
        if token.kind != IDENT or token.text != name or _text(tokens, i - 1) == "." or _text(tokens, i + 1) == "(":
            continue
        trie = _merge(trie, _chain(tokens, i, end))
        if trie is WHOLE:
            break
    return trie


def _chain(tokens: list[Token], i: int, end: int) -> Any:
    """The trie of one use: the select chain after tokens[i], into elementwise macros."""
    path: list[str] = []
    while _text(tokens, i + 1) == "." and i + 2 < end and tokens[i + 2].kind == IDENT:
        if _text(tokens, i + 3) != "(":
            path.append(tokens[i + 2].text)
            i += 2
            continue
        leaf = _macro(tokens, i + 2, end)
        return _nest(path, leaf)
    return _nest(path, WHOLE)


def _macro(tokens: list[Token], name: int, end: int) -> Any:
    """`.all(x, body)` at tokens[name]: each element read as `x` is read in body; else WHOLE."""
    if (tokens[name].text not in _ELEMENTWISE or name + 3 >= end or tokens[name + 2].kind != IDENT
            or _text(tokens, name + 3) != ","):
        return WHOLE
    close = matching(tokens, name + 1)
    element = _reads(tokens, tokens[name + 2].text, name + 4, min(close, end))
    return {ELEMENTS: element}


def _nest(path: list[str], leaf: Any) -> Any:
    for key in reversed(path):
        leaf = {key: leaf}
    return leaf


def _merge(a: Any, b: Any) -> Any:
    if a is WHOLE or b is WHOLE:
        return WHOLE
    merged = dict(a)
    for key, sub in b.items():
        merged[key] = _merge(merged[key], sub) if key in merged else sub
    return merged


def prune(value: Any, trie: Any) -> Any:
    """The parts of `value` that `trie` reads (absent fields stay absent)."""
    if trie is WHOLE:
        return value
    kind = type(value)
    if kind is dict:
        if ELEMENTS in trie:
            return value  # iterating a map ranges over its keys: keep it all
        return {key: prune(value[key], sub) for key, sub in trie.items() if key in value}
    if kind is list and ELEMENTS in trie:
        element = trie[ELEMENTS]
        return value if element is WHOLE else [prune(item, element) for item in value]
    return value
