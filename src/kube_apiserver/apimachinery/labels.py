"""Label selectors, as k8s.io/apimachinery/pkg/labels (+ pkg/selection).

``parse_selector("env in (prod,qa),!canary")`` implements the full grammar of
``labels.Parse`` with its exact error texts; ``selector_from_label_selector``
converts a metav1.LabelSelector dict like ``metav1.LabelSelectorAsSelector``.
Each requirement is compiled to a small predicate so ``Selector.matches`` is a
tight loop (it runs per object in LIST and per watch event).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import IntEnum, StrEnum
from typing import Any

from kube_apiserver.apimachinery.field import (
    ErrorList,
    FieldError,
    Path,
    aggregate_message,
    child_of,
    go_quote,
    invalid,
    not_supported,
    to_aggregate,
)
from kube_apiserver.apimachinery.validation import is_qualified_name, is_valid_label_value

Labels = Mapping[str, str]
Predicate = Callable[[Labels], bool]


class Operator(StrEnum):
    """``selection.Operator``."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_BINARY_OPERATORS = ("in", "notin", "=", "==", "!=", "gt", "lt")
_VALID_OPERATORS = (*_BINARY_OPERATORS, "exists", "!")
_EXACT_OPERATORS = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS})
_SET_OPERATORS = frozenset({Operator.IN, Operator.NOT_IN})
_UNARY_OPERATORS = frozenset({Operator.EXISTS, Operator.DOES_NOT_EXIST})
_ORDER_OPERATORS = frozenset({Operator.GREATER_THAN, Operator.LESS_THAN})


class SelectorParseError(ValueError):
    """A selector could not be parsed or built; ``str()`` is k8s' error text."""

    def __init__(self, message: str, errors: ErrorList | None = None) -> None:
        super().__init__(message)
        self.errors: ErrorList = errors or []


# --- requirements --------------------------------------------------------------

_INT64 = re.compile(r"[+-]?[0-9]+").fullmatch


def parse_int64(value: str) -> int | None:
    """Go's ``strconv.ParseInt(value, 10, 64)``; None on error."""
    if not _INT64(value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None


class Requirement:
    """A key, an operator and values; immutable, with a compiled matcher."""

    __slots__ = ("key", "operator", "values", "matches")

    def __init__(self, key: str, operator: Operator, values: Sequence[str]) -> None:
        self.key = key
        self.operator = operator
        self.values: tuple[str, ...] = tuple(values)
        self.matches: Predicate = _compile(key, operator, self.values)

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        shown = ",".join(sorted(self.values))
        if op in _SET_OPERATORS:
            return f"{self.key} {op.value} ({shown})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{shown}"

    def __repr__(self) -> str:
        return f"Requirement({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return (self.key, self.operator, self.values) == (other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))


def _compile(key: str, op: Operator, values: tuple[str, ...]) -> Predicate:
    if op is Operator.EXISTS:
        return lambda ls: key in ls
    if op is Operator.DOES_NOT_EXIST:
        return lambda ls: key not in ls
    if op in _ORDER_OPERATORS:
        return _compile_order(key, op, values)
    negate = op in (Operator.NOT_IN, Operator.NOT_EQUALS)
    if len(values) == 1:
        value = values[0]
        if negate:
            return lambda ls: ls.get(key) != value
        return lambda ls: ls.get(key) == value
    choices = frozenset(values)
    if negate:
        return lambda ls: key not in ls or ls[key] not in choices
    return lambda ls: key in ls and ls[key] in choices


def _compile_order(key: str, op: Operator, values: tuple[str, ...]) -> Predicate:
    bound = parse_int64(values[0]) if len(values) == 1 else None
    if bound is None:
        return lambda ls: False
    greater = op is Operator.GREATER_THAN

    def check(ls: Labels) -> bool:
        raw = ls.get(key)
        number = None if raw is None else parse_int64(raw)
        if number is None:
            return False
        return number > bound if greater else number < bound

    return check


def _validate_label_key(key: str, path: Path | None) -> FieldError | None:
    errs = is_qualified_name(key)
    return invalid(path, key, "; ".join(errs)) if errs else None


def _validate_label_value(key: str, value: str, path: Path) -> FieldError | None:
    errs = is_valid_label_value(value)
    return invalid(path.key(key), value, "; ".join(errs)) if errs else None


def _operator_errors(op: str, values: Sequence[str] | None, path: Path | None) -> ErrorList:
    value_path = child_of(path, "values")
    shown: Any = None if values is None else list(values)
    count = len(values or ())
    if op in _SET_OPERATORS:
        if count == 0:
            return [invalid(value_path, shown, "for 'in', 'notin' operators, values set can't be empty")]
    elif op in _EXACT_OPERATORS:
        if count != 1:
            return [invalid(value_path, shown, "exact-match compatibility requires one single value")]
    elif op in _UNARY_OPERATORS:
        if count != 0:
            return [invalid(value_path, shown, "values set must be empty for exists and does not exist")]
    elif op in _ORDER_OPERATORS:
        return _order_errors(values or (), shown, value_path)
    else:
        return [not_supported(child_of(path, "operator"), op, _VALID_OPERATORS)]
    return []


def _order_errors(values: Sequence[str], shown: Any, value_path: Path) -> ErrorList:
    errs: ErrorList = []
    if len(values) != 1:
        errs.append(invalid(value_path, shown, "for 'Gt', 'Lt' operators, exactly one value is required"))
    for i, value in enumerate(values):
        if parse_int64(value) is None:
            errs.append(invalid(value_path.index(i), value, "for 'Gt', 'Lt' operators, the value must be an integer"))
    return errs


def new_requirement(
    key: str, operator: str, values: Sequence[str] | None, path: Path | None = None
) -> Requirement:
    """``labels.NewRequirement``: validate and build, or raise SelectorParseError."""
    errs: ErrorList = []
    if (key_err := _validate_label_key(key, child_of(path, "key"))) is not None:
        errs.append(key_err)
    errs += _operator_errors(operator, values, path)
    value_path = child_of(path, "values")
    for i, value in enumerate(values or ()):
        if (value_err := _validate_label_value(key, value, value_path.index(i))) is not None:
            errs.append(value_err)
    if errs:
        unique = to_aggregate(errs)
        raise SelectorParseError(aggregate_message(unique), unique)
    return Requirement(key, Operator(operator), values or ())


# --- selectors -------------------------------------------------------------------

_NO_LABELS: Labels = {}


class Selector:
    """An AND of requirements (``labels.Selector``); immutable."""

    __slots__ = ("_requirements", "_predicates", "_nothing")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        self._requirements: tuple[Requirement, ...] = tuple(requirements)
        self._predicates: tuple[Predicate, ...] = tuple(r.matches for r in self._requirements)
        self._nothing = nothing

    def requirements(self) -> tuple[Requirement, ...]:
        return self._requirements

    def matches(self, labels: Labels | None) -> bool:
        if self._nothing:
            return False
        ls = _NO_LABELS if labels is None else labels
        for predicate in self._predicates:
            if not predicate(ls):
                return False
        return True

    def empty(self) -> bool:
        """True when the selector does not restrict anything."""
        return not self._nothing and not self._requirements

    def matches_nothing(self) -> bool:
        return self._nothing

    def add(self, *requirements: Requirement) -> Selector:
        """A new selector with more requirements, sorted by key."""
        merged = sorted((*self._requirements, *requirements), key=_by_key)
        return Selector(merged)

    def requires_exact_match(self, label: str) -> str | None:
        """The single value ``label`` must have, if the selector demands one."""
        for req in self._requirements:
            if req.key != label:
                continue
            exact = req.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
            return req.values[0] if exact and len(req.values) == 1 else None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        return "Selector(nothing)" if self._nothing else f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return (self._nothing, self._requirements) == (other._nothing, other._requirements)

    def __hash__(self) -> int:
        return hash((self._nothing, self._requirements))


def _by_key(req: Requirement) -> str:
    return req.key


_EVERYTHING = Selector()
_NOTHING = Selector(nothing=True)


def everything() -> Selector:
    return _EVERYTHING


def nothing() -> Selector:
    return _NOTHING


def selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """Exact-match selector for a label set, without validation (``SelectorFromSet``)."""
    reqs = [Requirement(k, Operator.EQUALS, (v,)) for k, v in (labels or {}).items()]
    return Selector(sorted(reqs, key=_by_key))


def validated_selector_from_set(labels: Mapping[str, str] | None) -> Selector:
    """Like :func:`selector_from_set` but validates keys/values (``ValidatedSelectorFromSet``)."""
    reqs = [new_requirement(k, Operator.EQUALS, [v]) for k, v in (labels or {}).items()]
    return Selector(sorted(reqs, key=_by_key))


_LABEL_SELECTOR_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def selector_from_label_selector(label_selector: Mapping[str, Any] | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: None selects nothing, ``{}`` everything."""
    if label_selector is None:
        return nothing()
    match_labels = label_selector.get("matchLabels") or {}
    expressions = label_selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return everything()
    reqs = [new_requirement(k, Operator.EQUALS, [v]) for k, v in match_labels.items()]
    for expr in expressions:
        operator = expr.get("operator") or ""
        op = _LABEL_SELECTOR_OPERATORS.get(operator)
        if op is None:
            raise SelectorParseError(f"{go_quote(str(operator))} is not a valid label selector operator")
        values = list(expr.get("values") or ()) or None
        reqs.append(new_requirement(expr.get("key") or "", op, values))
    return Selector(sorted(reqs, key=_by_key))


# --- lexer -------------------------------------------------------------------------


class Token(IntEnum):
    ERROR = 0
    END_OF_STRING = 1
    CLOSED_PAR = 2
    COMMA = 3
    DOES_NOT_EXIST = 4
    DOUBLE_EQUALS = 5
    EQUALS = 6
    GREATER_THAN = 7
    IDENTIFIER = 8
    IN = 9
    LESS_THAN = 10
    NOT_EQUALS = 11
    NOT_IN = 12
    OPEN_PAR = 13


_STRING_TO_TOKEN = {
    ")": Token.CLOSED_PAR, ",": Token.COMMA, "!": Token.DOES_NOT_EXIST, "==": Token.DOUBLE_EQUALS,
    "=": Token.EQUALS, ">": Token.GREATER_THAN, "in": Token.IN, "<": Token.LESS_THAN,
    "!=": Token.NOT_EQUALS, "notin": Token.NOT_IN, "(": Token.OPEN_PAR,
}
_WHITESPACE = frozenset(" \t\r\n")
_SPECIAL = frozenset("=!(),><")
_ENDS = ("", "\x00")  # Go's lexer reads both end of input and a NUL byte as 0

Item = tuple[Token, str]


class _Lexer:
    """Byte-for-byte the lexer of ``labels.Parse`` (NUL reads as end of input)."""

    def __init__(self, text: str) -> None:
        self._s = text
        self._pos = 0

    def _read(self) -> str:
        if self._pos >= len(self._s):
            return ""
        ch = self._s[self._pos]
        self._pos += 1
        return ch

    def lex(self) -> Item:
        ch = self._read()
        while ch in _WHITESPACE:
            ch = self._read()
        if ch in _ENDS:
            return Token.END_OF_STRING, ""
        self._pos -= 1
        return self._scan_special() if ch in _SPECIAL else self._scan_identifier()

    def _scan_identifier(self) -> Item:
        start = self._pos
        while True:
            ch = self._read()
            if ch in _ENDS:
                end = self._pos - len(ch)
                break
            if ch in _SPECIAL or ch in _WHITESPACE:
                self._pos -= 1
                end = self._pos
                break
        literal = self._s[start:end]
        return _STRING_TO_TOKEN.get(literal, Token.IDENTIFIER), literal

    def _scan_special(self) -> Item:
        last: Item | None = None
        buffer = ""
        while True:
            ch = self._read()
            if ch in _ENDS:
                break
            if ch not in _SPECIAL:
                self._pos -= 1
                break
            buffer += ch
            token = _STRING_TO_TOKEN.get(buffer)
            if token is not None:
                last = (token, buffer)
            elif last is not None:
                self._pos -= 1
                break
        if last is None:
            return Token.ERROR, f"error expected: keyword found '{buffer}'"
        return last


def lex_all(text: str) -> list[Item]:
    """All tokens of ``text``, ending with END_OF_STRING (the parser's scan)."""
    lexer = _Lexer(text)
    items: list[Item] = []
    while True:
        item = lexer.lex()
        items.append(item)
        if item[0] is Token.END_OF_STRING:
            return items


# --- parser --------------------------------------------------------------------------

_AS_IDENTIFIER = {Token.IN: Token.IDENTIFIER, Token.NOT_IN: Token.IDENTIFIER}
_TOKEN_OPERATORS = {
    Token.IN: Operator.IN, Token.EQUALS: Operator.EQUALS, Token.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
    Token.GREATER_THAN: Operator.GREATER_THAN, Token.LESS_THAN: Operator.LESS_THAN,
    Token.NOT_IN: Operator.NOT_IN, Token.NOT_EQUALS: Operator.NOT_EQUALS,
}
_STARTS_REQUIREMENT = (Token.IDENTIFIER, Token.DOES_NOT_EXIST)


class _Parser:
    def __init__(self, text: str, path: Path | None) -> None:
        self._items = lex_all(text)
        self._position = 0
        self._path = path

    def _lookahead(self, values: bool = True) -> Item:
        tok, lit = self._items[min(self._position, len(self._items) - 1)]
        return (_AS_IDENTIFIER.get(tok, tok), lit) if values else (tok, lit)

    def _consume(self, values: bool = True) -> Item:
        item = self._lookahead(values)
        self._position += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self._lookahead()
            if tok is Token.END_OF_STRING:
                return requirements
            if tok not in _STARTS_REQUIREMENT:
                raise SelectorParseError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            requirements.append(self._requirement())
            tok, lit = self._consume()
            if tok is Token.END_OF_STRING:
                return requirements
            if tok is not Token.COMMA:
                raise SelectorParseError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self._lookahead()
            if tok not in _STARTS_REQUIREMENT:
                raise SelectorParseError(f"found '{lit}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        try:
            return self._parse_requirement()
        except SelectorParseError as err:
            raise SelectorParseError(f"unable to parse requirement: {err}", err.errors) from None

    def _parse_requirement(self) -> Requirement:
        key, operator = self._key_and_inferred_operator()
        if operator is not None:
            return new_requirement(key, operator, [], self._path)
        operator = self._operator()
        values = self._values() if operator in _SET_OPERATORS else self._exact_value()
        return new_requirement(key, operator, sorted(values), self._path)

    def _key_and_inferred_operator(self) -> tuple[str, Operator | None]:
        operator = None
        tok, literal = self._consume()
        if tok is Token.DOES_NOT_EXIST:
            operator = Operator.DOES_NOT_EXIST
            tok, literal = self._consume()
        if tok is not Token.IDENTIFIER:
            raise SelectorParseError(f"found '{literal}', expected: identifier")
        if (err := _validate_label_key(literal, self._path)) is not None:
            raise SelectorParseError(str(err), [err])
        if operator is None and self._lookahead()[0] in (Token.END_OF_STRING, Token.COMMA):
            operator = Operator.EXISTS
        return literal, operator

    def _operator(self) -> Operator:
        tok, lit = self._consume(values=False)
        operator = _TOKEN_OPERATORS.get(tok)
        if operator is None:
            raise SelectorParseError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return operator

    def _values(self) -> set[str]:
        tok, lit = self._consume()
        if tok is not Token.OPEN_PAR:
            raise SelectorParseError(f"found '{lit}' expected: '('")
        tok, lit = self._lookahead()
        if tok in (Token.IDENTIFIER, Token.COMMA):
            found = self._identifiers_list()
            if self._consume()[0] is not Token.CLOSED_PAR:
                raise SelectorParseError(f"found '{lit}', expected: ')'")
            return found
        if tok is Token.CLOSED_PAR:
            self._consume()
            return {""}
        raise SelectorParseError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers_list(self) -> set[str]:
        found: set[str] = set()
        while True:
            tok, lit = self._consume()
            if tok is Token.IDENTIFIER:
                found.add(lit)
                tok2, lit2 = self._lookahead()
                if tok2 is Token.CLOSED_PAR:
                    return found
                if tok2 is not Token.COMMA:
                    raise SelectorParseError(f"found '{lit2}', expected: ',' or ')'")
            elif tok is Token.COMMA:
                if self._comma_in_list(found):
                    return found
            else:
                raise SelectorParseError(f"found '{lit}', expected: ',', or identifier")

    def _comma_in_list(self, found: set[str]) -> bool:
        """Handle ``(,`` ``,,`` and ``,)``; True when the list is complete."""
        if not found:
            found.add("")
        tok = self._lookahead()[0]
        if tok is Token.CLOSED_PAR:
            found.add("")
            return True
        if tok is Token.COMMA:
            self._consume()
            found.add("")
        return False

    def _exact_value(self) -> set[str]:
        if self._lookahead()[0] in (Token.END_OF_STRING, Token.COMMA):
            return {""}
        tok, lit = self._consume()
        if tok is Token.IDENTIFIER:
            return {lit}
        raise SelectorParseError(f"found '{lit}', expected: identifier")


def parse_to_requirements(text: str, path: Path | None = None) -> list[Requirement]:
    """``labels.ParseToRequirements``: the parsed requirements, sorted by key."""
    return sorted(_Parser(text, path).parse(), key=_by_key)


def parse_selector(text: str, path: Path | None = None) -> Selector:
    """``labels.Parse``; raises SelectorParseError with k8s' message."""
    return Selector(parse_to_requirements(text, path))
