"""Go `strconv`-compatible scalar parsing, so flag errors read exactly like pflag's."""

from __future__ import annotations

import json
import math
import re

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_INT_SYNTAX = re.compile(r"^[+-]?[0-9A-Za-z_]+$")
_LEGACY_OCTAL = re.compile(r"^[+-]?0[0-7]+$")
_FLOAT_SYNTAX = re.compile(r"^[+-]?(inf|infinity|nan|[0-9_]*\.?[0-9_]*([eE][+-]?[0-9_]+)?)$", re.IGNORECASE)
_INT64_MAX = (1 << 63) - 1


def go_quote(s: str) -> str:
    """Go's %q for a string (close enough: JSON string escaping)."""
    return json.dumps(s, ensure_ascii=False)


def _syntax_error(func: str, s: str) -> ValueError:
    return ValueError(f"strconv.{func}: parsing {go_quote(s)}: invalid syntax")


def _range_error(func: str, s: str) -> ValueError:
    return ValueError(f"strconv.{func}: parsing {go_quote(s)}: value out of range")


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


def format_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64) for the common cases."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)
