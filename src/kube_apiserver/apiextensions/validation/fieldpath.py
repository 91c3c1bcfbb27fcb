"""cel.ValidFieldPath on a schema dict: the JSON paths of selectableFields and of
x-kubernetes-validations fieldPath (``.a.b``, ``.a['b.c']``), resolved through properties and
additionalProperties, with upstream's error texts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Object = dict[str, Any]

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\.", re.DOTALL)


class FieldPathError(ValueError):
    pass


@dataclass(frozen=True)
class FoundField:
    """Where a JSON path led: its rendered field.Path, the name of its root and the schema there."""

    path: str
    root: str
    schema: Object | None


def _tokens(path: str) -> Iterator[str]:
    """The bufio.Scanner split of upstream: '.', '[', ']' alone, quoted strings whole, other runs."""
    i = 0
    while i < len(path):
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            yield path[i : j + 1]
            i = j + 1
        elif path[i] in ".[]":
            yield path[i]
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            yield path[i:j]
            i = j


def _unescape(quoted: str) -> str:
    def repl(match: re.Match[str]) -> str:
        char = match.group(0)[1]
        if char not in _ESCAPES:
            raise FieldPathError(f"invalid string literal: invalid escape char {match.group(0)}")
        return _ESCAPES[char]

    return _ESCAPE.sub(repl, quoted)


class _Walker:
    def __init__(self, schema: Object | None) -> None:
        self.schema = schema
        self.rendered = ""
        self.root = ""

    def step(self, name: str) -> None:
        schema = self.schema if isinstance(self.schema, dict) else {}
        if schema.get("properties"):
            prop = schema["properties"].get(name)
            self._append(name, named=True)
            if not isinstance(prop, dict):
                raise FieldPathError("does not refer to a valid field")
            self.schema = prop
        elif schema.get("additionalProperties") is not None:
            self._append(name, named=False)
            extra = schema["additionalProperties"]
            self.schema = extra if isinstance(extra, dict) else None
        else:
            raise FieldPathError("does not refer to a valid field")

    def _append(self, name: str, named: bool) -> None:
        if named:
            self.rendered = f"{self.rendered}.{name}" if self.rendered else name
        else:
            self.rendered = f"{self.rendered}[{name}]"
        if not self.root:
            self.root = name if named else f"[{name}]"


def valid_field_path(json_path: str, schema: Object | None, allow_array_notation: bool = True) -> FoundField:
    """ValidFieldPath; raises FieldPathError with upstream's message when the path is invalid."""
    walker = _Walker(schema)
    tokens = _tokens(json_path)
    for tok in tokens:
        if tok == "[":
            if not allow_array_notation:
                raise FieldPathError("array notation is not allowed")
            tok = next(tokens, None)
            if tok is None:
                raise FieldPathError("unexpected end of JSON path")
            if len(tok) < 2 or tok[0] != "'" or tok[-1] != "'":
                raise FieldPathError(f"expected single quoted string but got {tok}")
            walker.step(_unescape(tok[1:-1]))
            tok = next(tokens, None)
            if tok is None:
                raise FieldPathError("unexpected end of JSON path")
            if tok != "]":
                raise FieldPathError(f"expected ] but got {tok}")
        elif tok == ".":
            tok = next(tokens, None)
            if tok is None:
                raise FieldPathError("unexpected end of JSON path")
            walker.step(tok)
        else:
            raise FieldPathError(f"expected [ or . but got: {tok}")
    return FoundField(walker.rendered, walker.root, walker.schema)


def path_valid(schema: Object, json_path: str, structural_ok: bool) -> bool:
    """pathValid: a rule's fieldPath must resolve, unless the schema is not structural at all."""
    if not structural_ok:
        return True
    try:
        valid_field_path(json_path, schema)
    except FieldPathError:
        return False
    return True
