"""Kubernetes' quantity library: quantity, isQuantity, sign, isGreaterThan, isLessThan, compareTo,
add, sub, asInteger, isInteger, asApproximateFloat. A Quantity value is tagged with its exact value
as a reduced fraction ("3/2"); the format (DecimalSI, BinarySI) cannot be observed from CEL, and
quantities are equal when their values are (resource.Quantity.Equal)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from kube_apiserver.apimachinery import quantity as resource
from kube_apiserver.cel.errors import LibraryError, NoSuchOverload
from kube_apiserver.cel.values import QUANTITY, tag, untag

INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def to_tag(value: Fraction) -> dict[str, str]:
    return tag(QUANTITY, str(value))


# Parsing is exact arithmetic on Fractions (tens of microseconds); rules parse the same few
# literals and field values over and over, so both directions are cached.
@functools.lru_cache(maxsize=1024)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


@functools.lru_cache(maxsize=1024)
def _parsed(text: str) -> str:
    return str(resource.parse(text).value)


def value_of(value: Any) -> Fraction:
    return _fraction(untag(value, QUANTITY))


def _parse(text: Any) -> str:
    if type(text) is not str:
        raise NoSuchOverload()
    return _parsed(text)


def quantity(text: Any) -> dict[str, str]:
    try:
        return tag(QUANTITY, _parse(text))
    except resource.QuantityError as err:
        raise LibraryError(str(err)) from None


def is_quantity(text: Any) -> bool:
    try:
        _parse(text)
    except resource.QuantityError:
        return False
    return True


def sign(value: Any) -> int:
    amount = value_of(value)
    return (amount > 0) - (amount < 0)


def compare_to(value: Any, other: Any) -> int:
    a, b = value_of(value), value_of(other)
    return (a > b) - (a < b)


def _operand(other: Any) -> Fraction:
    # add/sub take a quantity or an int (resource.NewQuantity(int, DecimalExponent))
    return Fraction(other) if type(other) is int else value_of(other)


def add(value: Any, other: Any) -> dict[str, str]:
    return to_tag(value_of(value) + _operand(other))


def sub(value: Any, other: Any) -> dict[str, str]:
    return to_tag(value_of(value) - _operand(other))


def _as_int64(amount: Fraction) -> int | None:
    if amount.denominator != 1 or not INT_MIN <= amount.numerator <= INT_MAX:
        return None
    return amount.numerator


def as_integer(value: Any) -> int:
    result = _as_int64(value_of(value))
    if result is None:
        raise LibraryError("cannot convert value to integer")
    return result


def is_integer(value: Any) -> bool:
    return _as_int64(value_of(value)) is not None


def as_approximate_float(value: Any) -> float:
    amount = value_of(value)
    try:
        return float(amount)
    except OverflowError:
        return math.inf if amount > 0 else -math.inf


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": quantity,
    "isQuantity": is_quantity,
    "sign": sign,
    "isGreaterThan": lambda value, other: compare_to(value, other) == 1,
    "isLessThan": lambda value, other: compare_to(value, other) == -1,
    "compareTo": compare_to,
    "add": add,
    "sub": sub,
    "asInteger": as_integer,
    "isInteger": is_integer,
    "asApproximateFloat": as_approximate_float,
}
