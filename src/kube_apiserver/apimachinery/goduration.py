"""Go `time.Duration` text: ParseDuration ("1m0s", "5m", "1.5h", "300ms") and Duration.String(), the one
parser and formatter of durations (flags, ?timeout=, CronJob's @every, ...); plus go-openapi's
strfmt.ParseDuration, the looser grammar of OpenAPI's `format: duration` (days, weeks, "3 days").

Durations are represented in Python as float seconds; conversions go through integer nanoseconds so that
formatting is exact.
"""

from __future__ import annotations

import re

from .gostrconv import quote

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
_MAX_NS = (1 << 63) - 1


def _invalid(orig: str) -> ValueError:
    return ValueError(f"time: invalid duration {quote(orig)}")


def _leading_int(s: str, orig: str) -> tuple[int, str]:
    """Go's leadingInt: the leading digits; more than fits in an int64 is an invalid duration."""
    i, value = 0, 0
    while i < len(s) and "0" <= s[i] <= "9":
        value = value * 10 + ord(s[i]) - 48
        if value > 1 << 63:
            raise _invalid(orig)
        i += 1
    return value, s[i:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """Go's leadingFraction: digits past what an int64 holds are read and ignored (no error)."""
    i, value, scale, overflow = 0, 0, 1.0, False
    while i < len(s) and "0" <= s[i] <= "9":
        if not overflow:
            if value > _MAX_NS // 10 or value * 10 + ord(s[i]) - 48 > 1 << 63:
                overflow = True
            else:
                value, scale = value * 10 + ord(s[i]) - 48, scale * 10
        i += 1
    return value, scale, s[i:]


def _parse_component(s: str, orig: str) -> tuple[int, str]:
    """Parses one `<number><unit>` component; returns (nanoseconds, rest)."""
    before = len(s)
    whole, s = _leading_int(s, orig)
    had_whole = len(s) != before
    frac, scale, had_frac = 0, 1.0, False
    if s.startswith("."):
        before = len(s) - 1
        frac, scale, s = _leading_fraction(s[1:])
        had_frac = len(s) != before
    if not had_whole and not had_frac:
        raise _invalid(orig)  # "." alone
    i = 0
    while i < len(s) and s[i] != "." and not ("0" <= s[i] <= "9"):
        i += 1
    unit, s = s[:i], s[i:]
    if not unit:
        raise ValueError(f"time: missing unit in duration {quote(orig)}")
    if unit not in _UNITS_NS:
        raise ValueError(f"time: unknown unit {quote(unit)} in duration {quote(orig)}")
    scale_ns = _UNITS_NS[unit]
    if whole > (1 << 63) // scale_ns:
        raise _invalid(orig)
    ns = whole * scale_ns
    if frac:
        ns += int(float(frac) * (float(scale_ns) / scale))  # float64 arithmetic, as Go rounds it
        if ns > 1 << 63:
            raise _invalid(orig)
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
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise _invalid(orig)
        ns, s = _parse_component(s, orig)
        total += ns
        if total > 1 << 63:
            raise _invalid(orig)
    if sign > 0 and total > _MAX_NS:  # -1<<63 is a valid Duration, 1<<63 is not
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


# ---- go-openapi strfmt.ParseDuration (OpenAPI `format: duration`, CEL's view of such strings) ----

_STRFMT_MATCHER = re.compile(r"((\d+)\s*([A-Za-z\u00b5]+))", re.ASCII)
_STRFMT_UNITS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("ns", "nano"), 1),
    (("us", "\u00b5s", "micro"), 1_000),
    (("ms", "milli"), 1_000_000),
    (("s", "sec"), _NS_PER_SECOND),
    (("m", "min"), 60 * _NS_PER_SECOND),
    (("h", "hr", "hour"), 3600 * _NS_PER_SECOND),
    (("d", "day"), 86400 * _NS_PER_SECOND),
    (("w", "wk", "week"), 7 * 86400 * _NS_PER_SECOND),
)


def parse_strfmt_duration_ns(text: str) -> int:
    """strfmt.ParseDuration: time.ParseDuration first; else every "<integer> <unit>" found anywhere in the
    text is summed (units by prefix of their longest name: "3 days", "2weeks"). Not Go's grammar: no
    fractions or signs in the fallback, and text between the pairs is ignored, as in go-openapi."""
    try:
        return parse_duration_ns(text)
    except ValueError:
        pass
    total, found = 0, False
    for match in _STRFMT_MATCHER.finditer(text):
        if int(match.group(2)) > _MAX_NS:  # strconv.Atoi's range error fails the whole parse
            raise ValueError(f"unable to parse {text} as duration")
        unit = match.group(3).strip().lower()
        for variants, scale in _STRFMT_UNITS:
            last = len(variants) - 1
            for i, variant in enumerate(variants):
                if (i == last and unit.startswith(variant)) or variant == unit:
                    found = True
                    total += int(match.group(2)) * scale
    if not found:
        raise ValueError(f"unable to parse {text} as duration")
    return total
