"""Go's strconv, the one copy: Quote (what %q prints), FormatFloat 'g' -1 (what %v prints for a float64),
and the scalar parsers whose errors read exactly like pflag's."""

from __future__ import annotations

import math
import re
from decimal import Decimal

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_INT_SYNTAX = re.compile(r"^[+-]?[0-9A-Za-z_]+$")
_LEGACY_OCTAL = re.compile(r"^[+-]?0[0-7]+$")
_FLOAT_SYNTAX = re.compile(r"^[+-]?(inf|infinity|nan|[0-9_]*\.?[0-9_]*([eE][+-]?[0-9_]+)?)$", re.IGNORECASE)
_INT64_MAX = (1 << 63) - 1


_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def quote(s: str, escape_unprintable: bool = True) -> str:
    """strconv.Quote: a double-quoted Go literal. Unprintable runes (Go's unicode.IsPrint is Python's
    isprintable: categories L, M, N, P, S and the ASCII space) are escaped as \\xHH, \\uHHHH or
    \\UHHHHHHHH; a lone surrogate, which a Go string cannot hold, is U+FFFD as Go's JSON decoder makes it.
    escape_unprintable=False is cel-go's strings.quote, which escapes only the named escapes."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    return '"' + "".join(_quote_rune(ch, escape_unprintable) for ch in s) + '"'


def _quote_rune(ch: str, escape_unprintable: bool) -> str:
    escaped = _ESCAPES.get(ch)
    if escaped is not None:
        return escaped
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if ch.isprintable() or not escape_unprintable:
        return ch
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def quote_list(values: list[str]) -> str:
    """fmt's %q of a []string: ["a" "b"], each element as strconv.Quote writes it."""
    return "[" + " ".join(quote(value) for value in values) + "]"


def shortest_digits(value: float) -> tuple[str, int]:
    """The shortest digits that read back as abs(value) (Python's repr and Go's shortest agree) and the
    decimal point's position: 0.DIGITS x 10^point."""
    _, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    text = "".join(map(str, digits))
    stripped = text.rstrip("0") or "0"
    return stripped, len(text) + int(exponent)


def _fixed(sign: str, digits: str, point: int) -> str:
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def format_json_float(value: float) -> str:
    """encoding/json's float64 (what json.Marshal writes): %v's digits, in %e form only below 1e-6 or from
    1e21, with a negative exponent unpadded ("1e-7", "1e+21")."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {format_float(value)}")
    sign = "-" if math.copysign(1, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, point = shortest_digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exponent = point - 1
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}".replace("e-0", "e-")
    return _fixed(sign, digits, point)


def format_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), which is also fmt's %v of a float64: "1e+06", "0.0001",
    "1.5e-05", "123456", "-0", "+Inf", "NaN"."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, point = shortest_digits(value)
    exponent = point - 1
    if exponent < -4 or exponent >= 6:  # the shortest form decides %e with precision 6, as strconv does
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return _fixed(sign, digits, point)


def _syntax_error(func: str, s: str) -> ValueError:
    return ValueError(f"strconv.{func}: parsing {quote(s)}: invalid syntax")


def _range_error(func: str, s: str) -> ValueError:
    return ValueError(f"strconv.{func}: parsing {quote(s)}: value out of range")


def parse_bool(s: str) -> bool:
    """strconv.ParseBool."""
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise _syntax_error("ParseBool", s)


def parse_int(s: str) -> int:
    """strconv.ParseInt(s, 0, 64): accepts 0x/0o/0b prefixes and legacy leading-0 octal."""
    if not _INT_SYNTAX.match(s):
        raise _syntax_error("ParseInt", s)
    try:
        value = int(s, 8) if _LEGACY_OCTAL.match(s) else int(s, 0)
    except ValueError:
        raise _syntax_error("ParseInt", s) from None
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise _range_error("ParseInt", s)
    return value


def atoi(s: str) -> int:
    """strconv.Atoi: optional sign and decimal digits only."""
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not digits or not digits.isascii() or not digits.isdigit():
        raise _syntax_error("Atoi", s)
    value = int(s)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise _range_error("Atoi", s)
    return value


def parse_uint(s: str, bits: int = 64) -> int:
    """strconv.ParseUint(s, 10, bits)."""
    if not s.isascii() or not s.isdigit():
        raise _syntax_error("ParseUint", s)
    value = int(s)
    if value >= 1 << bits:
        raise _range_error("ParseUint", s)
    return value


def parse_float(s: str) -> float:
    """strconv.ParseFloat(s, 64)."""
    if not s or not _FLOAT_SYNTAX.match(s) or s.strip("+-.eE_") == "":
        raise _syntax_error("ParseFloat", s)
    try:
        value = float(s.replace("_", ""))
    except ValueError:
        raise _syntax_error("ParseFloat", s) from None
    if math.isinf(value) and "inf" not in s.lower():
        raise _range_error("ParseFloat", s)
    return value
