"""The one copy of Go's text conventions (apimachinery/goduration.py, gostrconv.py): time.ParseDuration
and Duration.String, strfmt.ParseDuration, strconv.Quote and FormatFloat 'g' -1 / encoding/json's floats,
checked on Go's own edge cases (time/time_test.go, strconv/quote_test.go, strconv/ftoa_test.go)."""

from __future__ import annotations

import pytest

from kube_apiserver.apimachinery.goduration import (
    format_duration_ns,
    parse_duration_ns,
    parse_strfmt_duration_ns,
)
from kube_apiserver.apimachinery.gostrconv import format_float, format_json_float, quote

S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0", 0),
        ("+0", 0),
        ("-0", 0),
        ("5s", 5 * S),
        ("30s", 30 * S),
        ("1478s", 1478 * S),
        ("-5s", -5 * S),
        ("+5s", 5 * S),
        ("5.0s", 5 * S),
        ("5.6s", 5 * S + 600_000_000),
        ("5.s", 5 * S),
        (".5s", S // 2),
        ("1.004s", S + 4_000_000),
        ("10ns", 10),
        ("11us", 11_000),
        ("12\u00b5s", 12_000),
        ("12\u03bcs", 12_000),
        ("13ms", 13_000_000),
        ("14s", 14 * S),
        ("15m", 15 * 60 * S),
        ("16h", 16 * 3600 * S),
        ("3h30m", 12600 * S),
        ("1m30s", 90 * S),
        ("10.5s4m", 4 * 60 * S + 10_500_000_000),
        ("-2m3.4s", -(123 * S + 400_000_000)),
        ("1h2m3s4ms5us6ns", 3723 * S + 4_005_006),
        ("39h9m14.425s", 140954425 * 1_000_000),
        ("52763797000ns", 52763797000),
        ("0.3333333333333333333h", 20 * 60 * S),
        ("9007199254740993ns", (1 << 53) + 1),
        ("9223372036854775807ns", (1 << 63) - 1),
        ("9223372036854775.807us", (1 << 63) - 1),
        ("9223372036s854ms775us807ns", (1 << 63) - 1),
        ("-9223372036854775808ns", -(1 << 63)),
        ("-9223372036854775.808us", -(1 << 63)),
        ("0.100000000000000000000h", 6 * 60 * S),
        ("0.830103483285477580700h", 49 * 60 * S + 48_372_539_827),
    ],
)
def test_parse_duration_as_go(text: str, ns: int) -> None:
    assert parse_duration_ns(text) == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("3", 'time: missing unit in duration "3"'),
        ("-", 'time: invalid duration "-"'),
        ("s", 'time: invalid duration "s"'),
        (".", 'time: invalid duration "."'),
        ("-.", 'time: invalid duration "-."'),
        (".s", 'time: invalid duration ".s"'),
        ("+.s", 'time: invalid duration "+.s"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("\x85\x85", 'time: invalid duration "\\u0085\\u0085"'),
        ("1m 30s", 'time: unknown unit "m " in duration "1m 30s"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
        ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
    ],
)
def test_parse_duration_errors_as_go(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_duration_ns(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1100, "1.1\u00b5s"),
        (2_200_000, "2.2ms"),
        (3_300_000_000, "3.3s"),
        (4 * 60 * S + 5 * S, "4m5s"),
        (4 * 60 * S + 5_001_000_000, "4m5.001s"),
        (5 * 3600 * S + 6 * 60 * S + 7_001_000_000, "5h6m7.001s"),
        (8 * 60 * S + 1, "8m0.000000001s"),
        ((1 << 63) - 1, "2562047h47m16.854775807s"),
        (-(1 << 63), "-2562047h47m16.854775808s"),
        (90 * S, "1m30s"),
    ],
)
def test_format_duration_as_go(ns: int, text: str) -> None:
    assert format_duration_ns(ns) == text


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("1h30m", 5400 * S),
        ("3 days", 3 * 86400 * S),
        ("1d", 86400 * S),
        ("2w", 14 * 86400 * S),
        ("2 weeks and 1 hr", (14 * 86400 + 3600) * S),
        ("5 seconds", 5 * S),
        ("10 mins", 600 * S),
    ],
)
def test_strfmt_duration_is_go_then_unit_pairs(text: str, ns: int) -> None:
    assert parse_strfmt_duration_ns(text) == ns


@pytest.mark.parametrize("text", ["soon", "", "3", "1x", "99999999999999999999 s"])
def test_strfmt_duration_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_strfmt_duration_ns(text)


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("", '""'),
        ("abc", '"abc"'),
        ('"', '"\\""'),
        ("\\", '"\\\\"'),
        ("\a\b\f\r\n\t\v", '"\\a\\b\\f\\r\\n\\t\\v"'),
        ("\x00\x1f\x7f", '"\\x00\\x1f\\x7f"'),
        ("\u263a", '"\u263a"'),
        ("\u00a0 \u2028", '"\\u00a0 \\u2028"'),
        ("\U0010ffff", '"\\U0010ffff"'),
        ("\U0001f600", '"\U0001f600"'),
        ("\u200b", '"\\u200b"'),
        ("\ud800", '"\ufffd"'),
        ("caf\u00e9", '"caf\u00e9"'),
    ],
)
def test_quote_as_strconv(text: str, quoted: str) -> None:
    assert quote(text) == quoted


def test_quote_for_cel_escapes_only_the_named_escapes() -> None:
    assert quote('a\x01\u00a0\n"', escape_unprintable=False) == '"a\x01\u00a0\\n\\""'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (-1.0, "-1"),
        (0.5, "0.5"),
        (100000.0, "100000"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (123456789.0, "1.23456789e+08"),
        (1e-4, "0.0001"),
        (1e-5, "1e-05"),
        (1.5e-5, "1.5e-05"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1e100, "1e+100"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (float("nan"), "NaN"),
    ],
)
def test_format_float_g_shortest(value: float, text: str) -> None:
    assert format_float(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (1e6, "1000000"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (-2.5, "-2.5"),
        (123456789.0, "123456789"),
    ],
)
def test_format_json_float_as_encoding_json(value: float, text: str) -> None:
    assert format_json_float(value) == text


def test_quote_list_as_fmt():
    from kube_apiserver.apimachinery.gostrconv import quote_list

    assert quote_list([]) == "[]"
    assert quote_list(["RBAC", 'a"b', "tab\t"]) == '["RBAC" "a\\"b" "tab\\t"]'
