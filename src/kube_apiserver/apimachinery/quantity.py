"""resource.Quantity (k8s.io/apimachinery/pkg/api/resource): parsing a quantity string and printing
it in canonical form (what kube-apiserver stores and returns: "1000m" becomes "1", "1536Mi" stays)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

FORMAT_ERROR = ("quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
SUFFIX_ERROR = "unable to parse quantity's suffix"
DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
SUFFIX_CHARS = "eEinumkKMGTP"
NANO = 10**9
_EXPONENT = re.compile(r"[+-]?[0-9]{1,9}").fullmatch


class QuantityError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    value: Fraction  # exact, at most nano precision
    format: str

    def __str__(self) -> str:
        return canonical(self)

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def scaled(self, scale: int) -> int:
        """Value() (scale 0) or MilliValue() (scale -3): rounded away from zero."""
        amount = self.value / Fraction(10) ** scale
        return math.ceil(amount) if amount >= 0 else math.floor(amount)


def _split(text: str) -> tuple[str, str]:
    """parseQuantityString: the number part and the suffix, or FORMAT_ERROR."""
    pos = 1 if text[:1] in ("+", "-") else 0
    while pos < len(text) and text[pos].isdigit():
        pos += 1
    if pos < len(text) and text[pos] == ".":
        pos += 1
        while pos < len(text) and text[pos].isdigit():
            pos += 1
    number, suffix = text[:pos], text[pos:]
    rest = suffix.lstrip(SUFFIX_CHARS)
    rest = rest[1:] if rest[:1] in ("+", "-") else rest
    if rest and not (rest.isdigit() and rest.isascii()):
        raise QuantityError(FORMAT_ERROR)
    return number, suffix


def _interpret(suffix: str) -> tuple[Fraction, str]:
    if suffix in DECIMAL_SUFFIXES:
        return Fraction(10) ** DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in BINARY_SUFFIXES:
        return Fraction(2) ** BINARY_SUFFIXES[suffix], BINARY_SI
    if suffix[:1] in ("e", "E") and _EXPONENT(suffix[1:]):
        return Fraction(10) ** int(suffix[1:]), DECIMAL_EXPONENT
    raise QuantityError(SUFFIX_ERROR)


def _number(number: str) -> Fraction:
    digits = number.lstrip("+-")
    whole, _, frac = digits.partition(".")
    amount = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    return -amount if number.startswith("-") else amount


def _round_nano(value: Fraction) -> Fraction:
    """Precision below 1n is rounded up (away from zero), as ParseQuantity does."""
    scaled = value * NANO
    whole = math.ceil(scaled) if scaled >= 0 else math.floor(scaled)
    return Fraction(whole, NANO)


def parse(raw: object) -> Quantity:
    """ParseQuantity of a JSON value (a string, or a number as its literal text)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise QuantityError(FORMAT_ERROR)
    text = raw if isinstance(raw, str) else repr(raw)
    if not text:
        raise QuantityError(FORMAT_ERROR)
    number, suffix = _split(text)
    multiplier, fmt = _interpret(suffix)
    return Quantity(_round_nano(_number(number) * multiplier), fmt)


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """value as mantissa * 10**exponent, the exponent a multiple of 3 (AsCanonicalBytes)."""
    mantissa, exponent = int(value * NANO), -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    return mantissa * 10**shift, exponent - shift


def _decimal_suffix(exponent: int, fmt: str) -> str:
    if fmt == DECIMAL_EXPONENT:
        return f"e{exponent}" if exponent else ""
    names = {v: k for k, v in DECIMAL_SUFFIXES.items()}
    return names.get(exponent, "")


def canonical(q: Quantity) -> str:
    """CanonicalizeBytes: the form kube-apiserver prints."""
    if q.value == 0:
        return "0"
    fmt = q.format
    if fmt == BINARY_SI and (-1024 < q.value < 1024 or q.value.denominator != 1):
        fmt = DECIMAL_SI
    if fmt != BINARY_SI:
        mantissa, exponent = _decimal_parts(q.value)
        return f"{mantissa}{_decimal_suffix(exponent, fmt)}"
    amount, exponent = int(q.value), 0
    while amount % 1024 == 0 and exponent < 60:
        amount //= 1024
        exponent += 10
    names = {v: k for k, v in BINARY_SUFFIXES.items()}
    return f"{amount}{names.get(exponent, '')}"


# ---- arithmetic (Quantity.Add, Quantity.Sub, Quantity.Cmp) ----

ZERO = Quantity(Fraction(0), DECIMAL_SI)


def from_int(value: int, fmt: str = DECIMAL_SI) -> Quantity:
    """resource.NewQuantity."""
    return Quantity(Fraction(value), fmt)


def add(a: Quantity, b: Quantity) -> Quantity:
    """a + b, in a's format unless a is zero (then b's), as Quantity.Add keeps it."""
    return Quantity(a.value + b.value, b.format if a.value == 0 else a.format)


def sub(a: Quantity, b: Quantity) -> Quantity:
    """a - b, in a's format unless a is zero (then b's), as Quantity.Sub keeps it."""
    return Quantity(a.value - b.value, b.format if a.value == 0 else a.format)
