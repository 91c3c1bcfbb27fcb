"""`<string>.format(<list>)` of cel-go's ext.Strings before version 4 (the one Kubernetes enables):
clauses %s %d %f %e %b %o %x %X and %%, precision as in "%.3f", numbers printed by the en_US
message printer (grouping commas in %f, "1.0 × 10⁰³" in %e)."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from kube_apiserver.apimachinery.gostrconv import format_float, quote
from kube_apiserver.cel.errors import LibraryError
from kube_apiserver.cel.values import tag_type, type_name

DEFAULT_PRECISION = 6
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _clause_error(what: str, value: Any) -> LibraryError:
    return LibraryError(f"error during formatting: {what}, was given {type_name(value)}")


def _duration(value: timedelta) -> str:
    total = Decimal(value.days * 86400 + value.seconds) + Decimal(value.microseconds) / 1000000
    text = format(total.normalize(), "f")
    return f"{text}s"


def _timestamp(value: datetime) -> str:
    """RFC 3339 in UTC with trailing zeros of the fraction dropped (Go's RFC3339Nano)."""
    utc = value.astimezone(UTC) if value.tzinfo else value
    fraction = f".{utc.microsecond:06d}".rstrip("0") if utc.microsecond else ""
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + fraction.rstrip(".") + "Z"


def _string(value: Any, nested: bool = False) -> str:
    """The %s clause (FormatString); inside lists and maps values are quoted as CEL literals."""
    kind = type(value)
    if kind is str:
        return quote(value) if nested else value
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        if nested:
            text = _fixed(value, DEFAULT_PRECISION)
            return f'"{text}"' if not math.isfinite(value) else text
        return format_float(value)
    if value is None:
        return "null"
    if kind is bytes:
        text = value.decode("utf-8", "replace")
        return "b" + quote(text) if nested else text
    if kind is timedelta:
        return f'duration("{_duration(value)}")' if nested else _duration(value)
    if kind is datetime:
        return f'timestamp("{_timestamp(value)}")' if nested else _timestamp(value)
    if kind is list:
        return "[" + ", ".join(_string(item, True) for item in value) + "]"
    if kind is dict and tag_type(value) is None:
        return _map(value)
    raise _clause_error("string clause can only be used on strings, bools, bytes, ints, doubles, maps, "
                        "lists, types, durations, and timestamps", value)


def _map(value: dict[Any, Any]) -> str:
    pairs = []
    for key, item in value.items():
        if type(key) not in (str, bool, int):
            raise LibraryError(f"no formatting function for map key of type {type_name(key)}")
        pairs.append((_string(key, True), _string(item, True)))
    pairs.sort(key=lambda pair: pair[0])
    return "{" + ", ".join(f"{key}:{item}" for key, item in pairs) + "}"


def _double(value: Any, what: str) -> float:
    if type(value) is float:
        return value
    if type(value) is str and value in _SPECIAL_DOUBLES:
        return _SPECIAL_DOUBLES[value]
    raise _clause_error(what, value)


def _fixed(value: float, precision: int) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:,.{precision}f}"


def _scientific(value: float, width: int) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    # cel-go builds "%<precision>e", so the precision lands in the width; the printer localizes
    mantissa, _, exponent = f"{value:{width}e}".strip().partition("e")
    power = int(exponent)
    digits = f"{'-' if power < 0 else ''}{abs(power):02d}".translate(_SUPERSCRIPT)
    return f"{mantissa}\u202f×\u202f10{digits}"


def _integer(value: Any, what: str, base: str) -> str:
    if type(value) is bool and base == "b":
        return "1" if value else "0"
    if type(value) is not int:
        raise _clause_error(what, value)
    return format(value, base)


def _hex(value: Any, upper: bool) -> str:
    if type(value) is str:
        value = value.encode()
    if type(value) is bytes:
        text = value.hex()
    elif type(value) is int:
        text = format(value, "x")
    else:
        raise _clause_error("only integers, byte buffers, and strings can be formatted as hex", value)
    return text.upper() if upper else text


def _clause(verb: str, precision: int | None, value: Any) -> str:
    if verb == "s":
        return _string(value)
    if verb == "d":
        return _integer(value, "decimal clause can only be used on integers", "d")
    if verb == "f":
        double = _double(value, "fixed-point clause can only be used on doubles")
        return _fixed(double, DEFAULT_PRECISION if precision is None else precision)
    if verb == "e":
        double = _double(value, "scientific clause can only be used on doubles")
        return _scientific(double, DEFAULT_PRECISION if precision is None else precision)
    if verb == "b":
        return _integer(value, "only integers and bools can be formatted as binary", "b")
    if verb == "o":
        return _integer(value, "octal clause can only be used on integers", "o")
    return _hex(value, verb == "X")


_PRECISION = re.compile(r"\.([0-9]*)")


def format_string(text: str, args: list[Any]) -> str:
    """parseFormatString: substitute each clause with the next argument."""
    out, pos, index = [], 0, 0
    while pos < len(text):
        ch = text[pos]
        if ch != "%":
            out.append(ch)
            pos += 1
            continue
        if text.startswith("%%", pos):
            out.append("%")
            pos += 2
            continue
        if index >= len(args):
            raise LibraryError(f"index {index} out of range")
        if pos + 1 >= len(text):
            raise LibraryError("unexpected end of string")
        pos, verb, precision = _parse_clause(text, pos + 1)
        out.append(_clause(verb, precision, args[index]))
        index += 1
    return "".join(out)


def _parse_clause(text: str, pos: int) -> tuple[int, str, int | None]:
    precision = None
    match = _PRECISION.match(text, pos)
    if match:
        if match.end() >= len(text):
            raise LibraryError("could not parse formatting clause: error while parsing precision: "
                               "could not find end of precision specifier")
        precision = int(match.group(1) or "0")
        pos = match.end()
    verb = text[pos]
    if verb not in "sdfebxXo":
        raise LibraryError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
    return pos + 1, verb, precision
