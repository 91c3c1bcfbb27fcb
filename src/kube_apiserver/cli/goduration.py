"""Go `time.Duration` text: ParseDuration ("1m0s", "5m", "1.5h", "300ms") and Duration.String().

Durations are represented in Python as float seconds; conversions go through integer nanoseconds so that
formatting is exact.
"""

from __future__ import annotations

import json

_UNITS_NS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}

_NS_PER_SECOND = 1_000_000_000


def _quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _invalid(orig: str) -> ValueError:
    return ValueError(f"time: invalid duration {_quote(orig)}")


def _take_digits(s: str) -> tuple[str, str]:
    i = 0
    while i < len(s) and s[i].isdigit() and s[i].isascii():
        i += 1
    return s[:i], s[i:]


def _take_unit(s: str) -> tuple[str, str]:
    i = 0
    while i < len(s) and s[i] != "." and not (s[i].isascii() and s[i].isdigit()):
        i += 1
    return s[:i], s[i:]


def _parse_component(s: str, orig: str) -> tuple[int, str]:
    """Parses one `<number><unit>` component; returns (nanoseconds, rest)."""
    whole, s = _take_digits(s)
    frac = ""
    if s.startswith("."):
        frac, s = _take_digits(s[1:])
    if not whole and not frac:
        raise _invalid(orig)
    unit, s = _take_unit(s)
    if not unit:
        raise ValueError(f"time: missing unit in duration {_quote(orig)}")
    if unit not in _UNITS_NS:
        raise ValueError(f"time: unknown unit {_quote(unit)} in duration {_quote(orig)}")
    scale = _UNITS_NS[unit]
    ns = int(whole or "0") * scale
    if frac:
        ns += int(frac) * scale // (10 ** len(frac))
    return ns, s


def parse_duration_ns(text: str) -> int:
    """Go's time.ParseDuration, returning integer nanoseconds; raises ValueError with Go's message."""
    orig, s, sign = text, text, 1
    if s[:1] in ("-", "+"):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise _invalid(orig)
    total = 0
    while s:
        if not (s[0] == "." or (s[0].isascii() and s[0].isdigit())):
            raise _invalid(orig)
        ns, s = _parse_component(s, orig)
        total += ns
    if total > (1 << 63) - 1:
        raise _invalid(orig)
    return sign * total


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration, returning float seconds."""
    return parse_duration_ns(text) / _NS_PER_SECOND


def _format_fraction(value: int, digits: int) -> str:
    """`value` has `digits` fractional decimal digits: renders "12.5" style, trailing zeros dropped."""
    whole, frac = divmod(value, 10**digits)
    frac_text = str(frac).rjust(digits, "0").rstrip("0")
    return f"{whole}.{frac_text}" if frac_text else str(whole)


def _format_sub_second(ns: int) -> str:
    if ns < 1_000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return _format_fraction(ns, 3) + "\u00b5s"
    return _format_fraction(ns, 6) + "ms"


def format_duration_ns(ns: int) -> str:
    """Go's time.Duration.String() for integer nanoseconds: "0s", "1m0s", "1h0m0s", "1.5s", "300ms"."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < _NS_PER_SECOND:
        return sign + _format_sub_second(ns)
    seconds_ns = ns % (60 * _NS_PER_SECOND)
    minutes_total = ns // (60 * _NS_PER_SECOND)
    text = _format_fraction(seconds_ns, 9) + "s"
    if minutes_total:
        hours, minutes = divmod(minutes_total, 60)
        text = f"{minutes}m{text}"
        if hours:
            text = f"{hours}h{text}"
    return sign + text


def format_duration(seconds: float) -> str:
    """Go's time.Duration.String() for float seconds."""
    return format_duration_ns(round(seconds * _NS_PER_SECOND))
