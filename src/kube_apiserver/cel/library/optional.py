"""Runtime halves of the optional syntax the interpreter does not parse: `x.?f` and `x[?k]` are
rewritten (see kube_apiserver.cel.checks) into calls of these functions. The interpreter itself
provides optional.of/none/ofNonZeroValue, hasValue, value, orValue and or. Also cel-go's bool()
conversion of strings, which the interpreter lacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kube_apiserver.cel.errors import LibraryError, NoSuchOverload
from kube_apiserver.cel.interpreter import interpreter

SELECT = "_optSelect"
INDEX = "_optIndex"


def _NONE() -> Any:  # noqa: N802 - reads as the constant it stands for
    return interpreter().OptionalValue.none()


def _receiver(value: Any) -> tuple[bool, Any]:
    """(present, value): an optional receiver chains, a plain one is present."""
    if isinstance(value, interpreter().OptionalValue):
        return value.has_value(), value.value() if value.has_value() else None
    return True, value


def opt_select(value: Any, field: Any) -> Any:
    present, target = _receiver(value)
    if not present:
        return _NONE()
    if type(target) is not dict:
        raise NoSuchOverload()
    return interpreter().OptionalValue.of(target[field]) if field in target else _NONE()


def opt_index(value: Any, key: Any) -> Any:
    present, target = _receiver(value)
    if not present:
        return _NONE()
    if type(target) is list:
        if type(key) is float and key.is_integer():
            key = int(key)
        if type(key) is not int:
            raise NoSuchOverload()
        return interpreter().OptionalValue.of(target[key]) if 0 <= key < len(target) else _NONE()
    if type(target) is dict:
        return interpreter().OptionalValue.of(target[key]) if key in target else _NONE()
    raise NoSuchOverload()


_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def to_bool(value: Any) -> bool:
    """bool(<string>) as strconv.ParseBool reads it (bool(<bool>) is the interpreter's)."""
    if type(value) is bool:
        return value
    if type(value) is not str:
        raise NoSuchOverload()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise LibraryError("type conversion error from 'string' to 'bool'")  # cel-go's String.ConvertToType


FUNCTIONS: dict[str, Callable[..., Any]] = {SELECT: opt_select, INDEX: opt_index, "bool": to_bool}
