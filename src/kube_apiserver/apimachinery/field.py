"""Field-level validation errors, as k8s.io/apimachinery/pkg/util/validation/field.

A :class:`Path` names a field (``spec.containers[0].name``); a :class:`FieldError`
pairs a path with an :class:`ErrorType`, the offending value and a detail text.
``str(err)`` renders exactly what Go's ``(*field.Error).Error()`` renders, and
``err.reason`` is the ``StatusCause.reason`` k8s puts in a 422 Status.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .gostrconv import format_float, format_json_float
from .gostrconv import quote as go_quote  # field.go_quote: the name the validation code imports


class Path:
    """A path from some root to a field; immutable, shares its parents."""

    __slots__ = ("_name", "_index", "_parent")

    def __init__(self, name: str, *more_names: str) -> None:
        """Build a root path, like Go's ``field.NewPath(name, moreNames...)``."""
        node = _node(name, "", None)
        for extra in more_names:
            node = _node(extra, "", node)
        self._name, self._index, self._parent = node._name, node._index, node._parent

    @property
    def parent(self) -> Path | None:
        return self._parent

    def root(self) -> Path:
        node = self
        while node._parent is not None:
            node = node._parent
        return node

    def child(self, name: str, *more_names: str) -> Path:
        node = _node(name, "", self)
        for extra in more_names:
            node = _node(extra, "", node)
        return node

    def index(self, index: int) -> Path:
        return _node("", str(index), self)

    def key(self, key: str) -> Path:
        return _node("", key, self)

    def __str__(self) -> str:
        elems: list[Path] = []
        node: Path | None = self
        while node is not None:
            elems.append(node)
            node = node._parent
        parts: list[str] = []
        for elem in reversed(elems):
            if elem._name:
                if elem._parent is not None:
                    parts.append(".")
                parts.append(elem._name)
            else:
                parts.append(f"[{elem._index}]")
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"


def _node(name: str, index: str, parent: Path | None) -> Path:
    node = Path.__new__(Path)
    node._name, node._index, node._parent = name, index, parent
    return node


def path_str(path: Path | None) -> str:
    """Render a possibly-nil path the way Go does (``<nil>``)."""
    return "<nil>" if path is None else str(path)


def child_of(path: Path | None, name: str) -> Path:
    """Go's ``(*Path)(nil).Child(name)``: a child of nil is a new root."""
    return Path(name) if path is None else path.child(name)


class ErrorType(StrEnum):
    """Machine-readable error types; the value is the StatusCause reason."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def message(self) -> str:
        """Go's ``ErrorType.String()``: the canonical human text."""
        return _TYPE_MESSAGES[self]


_TYPE_MESSAGES = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}

_VALUELESS_TYPES = frozenset(
    {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}
)


class _OmitValue:
    """Marker for a bad value that must not be printed (Go's ``omitValue``)."""

    def __repr__(self) -> str:
        return "OMIT_VALUE"


OMIT_VALUE: Any = _OmitValue()


@dataclass(slots=True)
class FieldError:
    """One field-level validation error (Go's ``*field.Error``)."""

    type: ErrorType
    field: str
    bad_value: Any
    detail: str
    origin: str = ""

    @property
    def reason(self) -> str:
        return self.type.value

    def error_body(self) -> str:
        """The message without the field name (Go's ``ErrorBody()``)."""
        if self.type in _VALUELESS_TYPES or self.bad_value is OMIT_VALUE:
            body = self.type.message
        else:
            body = f"{self.type.message}: {format_bad_value(self.bad_value)}"
        return f"{body}: {self.detail}" if self.detail else body

    def with_origin(self, origin: str) -> FieldError:
        self.origin = origin
        return self

    def __str__(self) -> str:
        return f"{self.field}: {self.error_body()}"


ErrorList = list[FieldError]


def required(path: Path | None, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, path_str(path), "", detail)


def invalid(path: Path | None, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path_str(path), value, detail)


def type_invalid(path: Path | None, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, path_str(path), value, detail)


def not_found(path: Path | None, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, path_str(path), value, "")


def duplicate(path: Path | None, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, path_str(path), value, "")


def forbidden(path: Path | None, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, path_str(path), "", detail)


def not_supported(path: Path | None, value: Any, valid_values: Iterable[object] = ()) -> FieldError:
    quoted = [go_quote(_go_sprint(v)) for v in valid_values]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(ErrorType.NOT_SUPPORTED, path_str(path), value, detail)


def too_long(path: Path | None, value: Any = None, max_length: int = -1) -> FieldError:
    """The value is never shown; ``max_length < 0`` means "unknown limit"."""
    del value
    if max_length >= 0:
        unit = "byte" if max_length == 1 else "bytes"
        detail = f"may not be more than {max_length} {unit}"
    else:
        detail = "value is too long"
    return FieldError(ErrorType.TOO_LONG, path_str(path), "<value omitted>", detail)


def too_many(path: Path | None, actual_quantity: int, max_quantity: int) -> FieldError:
    if max_quantity >= 0:
        unit = "item" if max_quantity == 1 else "items"
        detail = f"must have at most {max_quantity} {unit}"
    else:
        detail = "has too many items"
    actual = actual_quantity if actual_quantity >= 0 else OMIT_VALUE
    return FieldError(ErrorType.TOO_MANY, path_str(path), actual, detail)


def internal(path: Path | None, err: object) -> FieldError:
    return FieldError(ErrorType.INTERNAL, path_str(path), None, str(err))


def to_aggregate(errors: Sequence[FieldError]) -> ErrorList:
    """Drop errors whose message repeats an earlier one (``ToAggregate``)."""
    seen: set[str] = set()
    out: ErrorList = []
    for err in errors:
        msg = str(err)
        if msg not in seen:
            seen.add(msg)
            out.append(err)
    return out


def aggregate_message(errors: Sequence[object]) -> str:
    """Text of ``utilerrors.NewAggregate(errs).Error()``: one message or ``[a, b]``."""
    msgs: list[str] = []
    for err in errors:
        msg = str(err)
        if msg not in msgs:
            msgs.append(msg)
    if len(msgs) <= 1:
        return msgs[0] if msgs else ""
    return "[" + ", ".join(msgs) + "]"


# --- Go value formatting -------------------------------------------------

def format_bad_value(value: Any) -> str:
    """Render a bad value as Go's ``ErrorBody`` does: %q, %v or JSON."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    return go_json(value)


def _go_sprint(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_float(value)
    return str(value)


_JSON_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
    "\t": "\\t", "<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
    "\u2028": "\\u2028", "\u2029": "\\u2029",
}


def _json_char(ch: str) -> str:
    esc = _JSON_ESCAPES.get(ch)
    if esc is not None:
        return esc
    cp = ord(ch)
    if cp < 0x20:
        return f"\\u{cp:04x}"
    if 0xD800 <= cp <= 0xDFFF:
        return "\ufffd"
    return ch


def _go_json_string(s: str) -> str:
    return '"' + "".join(_json_char(ch) for ch in s) + '"'


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a decoded-JSON value (maps sorted by key, HTML-escaped)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_json_float(value)
    if isinstance(value, dict):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_go_json_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, OrderedStruct):
        return "{" + ",".join(f"{_go_json_string(k)}:{go_json(v)}" for k, v in value.items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _go_json_string(str(value))


@dataclass(frozen=True, slots=True)
class OrderedStruct:
    """A bad value rendered as a Go struct: JSON keys in declaration order."""

    items: tuple[tuple[str, Any], ...]
