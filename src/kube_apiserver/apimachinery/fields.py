"""Field selectors, as k8s.io/apimachinery/pkg/fields.

``parse_field_selector("metadata.name=foo,status.phase!=Running")`` follows
``fields.ParseSelector``: comma-separated ``a=b`` / ``a==b`` / ``a!=b`` terms,
values escaped with backslashes (``\\,`` ``\\=`` ``\\\\``), terms sorted.
A missing field reads as ``""`` when matching, as in Go.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

Fields = Mapping[str, str]
TransformFunc = Callable[[str, str], tuple[str, str]]

EQUALS = "="
NOT_EQUALS = "!="
DOUBLE_EQUALS = "=="
# "==" is tried before "=" so no "=" is left on the value.
_TERM_OPERATORS = (NOT_EQUALS, DOUBLE_EQUALS, EQUALS)


class FieldSelectorParseError(ValueError):
    """A field selector could not be parsed; ``str()`` is k8s' error text."""


class Requirement(NamedTuple):
    """One term: ``field`` compared with ``value`` by ``operator`` (``=`` or ``!=``)."""

    field: str
    operator: str
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


def escape_value(value: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(value: str) -> str:
    """``fields.UnescapeValue``; raises FieldSelectorParseError with k8s' texts."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise FieldSelectorParseError(
                    f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            raise FieldSelectorParseError(
                f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise FieldSelectorParseError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


class FieldSelector:
    """An AND of field terms (``fields.Selector``); immutable."""

    __slots__ = ("_requirements", "_checks", "_nothing")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        self._requirements: tuple[Requirement, ...] = tuple(requirements)
        self._checks = tuple((r.field, r.value, r.operator == EQUALS) for r in self._requirements)
        self._nothing = nothing

    def requirements(self) -> list[Requirement]:
        return list(self._requirements)

    def matches(self, fields: Fields) -> bool:
        if self._nothing:
            return False
        for name, value, equal in self._checks:
            if (fields.get(name, "") == value) is not equal:
                return False
        return True

    def empty(self) -> bool:
        return not self._nothing and not self._requirements

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, if an ``=`` term names it."""
        for req in self._requirements:
            if req.field == field and req.operator == EQUALS:
                return req.value
        return None

    def transform(self, fn: TransformFunc) -> FieldSelector:
        """Rewrite every term (``Selector.Transform``); terms mapped to ("", "") drop out."""
        if self._nothing:
            return self
        out: list[Requirement] = []
        for req in self._requirements:
            field, value = fn(req.field, req.value)
            if field or value:
                out.append(Requirement(field, req.operator, value))
        return FieldSelector(out)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return "FieldSelector(nothing)" if self._nothing else f"FieldSelector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSelector):
            return NotImplemented
        return (self._nothing, self._requirements) == (other._nothing, other._requirements)

    def __hash__(self) -> int:
        return hash((self._nothing, self._requirements))


_EVERYTHING = FieldSelector()
_NOTHING = FieldSelector(nothing=True)


def everything() -> FieldSelector:
    return _EVERYTHING


def nothing() -> FieldSelector:
    return _NOTHING


def selector_from_set(fields: Mapping[str, str] | None) -> FieldSelector:
    """Exact-match selector for a field set (``fields.SelectorFromSet``)."""
    return FieldSelector(Requirement(k, EQUALS, v) for k, v in (fields or {}).items())


def one_term_equal_selector(field: str, value: str) -> FieldSelector:
    return FieldSelector([Requirement(field, EQUALS, value)])


def one_term_not_equal_selector(field: str, value: str) -> FieldSelector:
    return FieldSelector([Requirement(field, NOT_EQUALS, value)])


def split_terms(selector: str) -> list[str]:
    """Split on unescaped commas, keeping escapes in the terms (``splitTerms``)."""
    if not selector:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(selector):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


def split_term(term: str) -> tuple[str, str, str] | None:
    """(lhs, operator, raw rhs) at the first operator found, or None (``splitTerm``)."""
    for i in range(len(term)):
        for op in _TERM_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def parse_field_selector(selector: str, transform: TransformFunc | None = None) -> FieldSelector:
    """``fields.ParseSelector`` (or ``ParseAndTransformSelector`` with ``transform``)."""
    requirements: list[Requirement] = []
    for part in sorted(split_terms(selector)):
        if not part:
            continue
        split = split_term(part)
        if split is None:
            raise FieldSelectorParseError(f"invalid selector: '{selector}'; can't understand '{part}'")
        lhs, op, rhs = split
        operator = NOT_EQUALS if op == NOT_EQUALS else EQUALS
        requirements.append(Requirement(lhs, operator, unescape_value(rhs)))
    return FieldSelector(requirements).transform(transform or _identity)


def _identity(field: str, value: str) -> tuple[str, str]:
    return field, value
