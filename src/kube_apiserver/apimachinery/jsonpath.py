"""Kubernetes JSONPath (k8s.io/client-go/util/jsonpath), the part the server evaluates: custom resource
printer columns, selectable fields and scale paths. A path such as
`.status.conditions[?(@.type=="Ready")].status` is parsed once into steps; `find` returns every match.

Supported: `.field`, `['field']` and `["a","b"]` unions, `[n]`, slices `[a:b:c]`, `[*]` and `.*`, recursive
`..field`, filters `[?(@.x op value)]` (==, !=, <, <=, >, >=) and existence `[?(@.x)]`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

Step = Callable[[Any], Iterator[Any]]
MISSING = object()
_FILTER = re.compile(r"""^\?\(@((?:\.[\w-]+|\[['"][^'"]+['"]\])*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$""")


class JSONPathError(ValueError):
    pass


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from value.values()
    elif isinstance(value, list):
        yield from value


def _field(name: str) -> Step:
    if name == "*":
        return _children

    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, dict) and name in value:
            yield value[name]
    return step


def _recursive(name: str) -> Step:
    def walk(value: Any) -> Iterator[Any]:
        if isinstance(value, dict):
            if name in value:
                yield value[name]
        for child in _children(value):
            yield from walk(child)
    return walk


def _index(text: str) -> Step:
    if text == "*":
        return _children
    if ":" in text:
        parts = [int(p) if p.strip() else None for p in text.split(":")]
        bounds = slice(*parts)

        def sliced(value: Any) -> Iterator[Any]:
            if isinstance(value, list):
                yield from value[bounds]
        return sliced
    number = int(text)

    def indexed(value: Any) -> Iterator[Any]:
        if isinstance(value, list) and -len(value) <= number < len(value):
            yield value[number]
    return indexed


def _literal(text: str) -> Any:
    text = text.strip()
    if text[:1] in "'\"" and text[-1:] == text[:1]:
        return text[1:-1]
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        raise JSONPathError(f"unrecognized filter value {text}") from None


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    try:
        return bool({"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op])
    except TypeError:
        return False


def _filter(text: str) -> Step:
    match = _FILTER.match(text)
    if match is None:
        raise JSONPathError(f"unrecognized filter {text}")
    path, op, value = match.groups()
    inner = compile_path(path or "")
    right = _literal(value) if op else None

    def filtered(value_: Any) -> Iterator[Any]:
        for item in _children(value_) if isinstance(value_, list) else [value_]:
            found = inner(item)
            if op is None:
                if found:
                    yield item
            elif found and _compare(found[0], op, right):
                yield item
    return filtered


def _bracket(text: str) -> Step:
    text = text.strip()
    if text.startswith("?"):
        return _filter(text)
    if text[:1] in "'\"":
        names = [_literal(part) for part in text.split(",")]
        steps = [_field(n) for n in names]
        return lambda value: (found for step in steps for found in step(value))
    return _index(text)


def _split_brackets(path: str) -> Iterator[tuple[str, str]]:
    """('.', name), ('..', name) and ('[', inside) tokens."""
    i = 0
    while i < len(path):
        if path.startswith("..", i):
            end = _name_end(path, i + 2)
            yield "..", path[i + 2:end]
            i = end
        elif path[i] == ".":
            end = _name_end(path, i + 1)
            yield ".", path[i + 1:end]
            i = end
        elif path[i] == "[":
            end = _bracket_end(path, i)
            yield "[", path[i + 1:end]
            i = end + 1
        else:
            end = _name_end(path, i)
            yield ".", path[i:end]
            i = end


def _name_end(path: str, start: int) -> int:
    end = start
    while end < len(path) and path[end] not in ".[":
        end += 1
    return end


def _bracket_end(path: str, start: int) -> int:
    depth, quote = 0, ""
    for i in range(start, len(path)):
        char = path[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return i
    raise JSONPathError(f"unterminated array in {path}")


def compile_path(path: str) -> Callable[[Any], list[Any]]:
    """A JSONPath expression (without braces) as a function returning every value it selects."""
    path = path.strip()
    if path.startswith("$"):
        path = path[1:]
    steps: list[Step] = []
    for kind, text in _split_brackets(path):
        if kind == "[":
            steps.append(_bracket(text))
        elif kind == "..":
            steps.append(_recursive(text))
        elif text:
            steps.append(_field(text))

    def find(value: Any) -> list[Any]:
        current = [value]
        for step in steps:
            current = [found for item in current for found in step(item)]
        return current
    return find


def parse_template(template: str) -> Callable[[Any], list[Any]]:
    """`{.a.b}`, as printer columns and kubectl write paths."""
    template = template.strip()
    if not (template.startswith("{") and template.endswith("}")):
        raise JSONPathError(f"unrecognized template {template}")
    return compile_path(template[1:-1])


def text(value: Any) -> str:
    """How JSONPath prints one value: strings bare, everything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return orjson.dumps(value).decode()
