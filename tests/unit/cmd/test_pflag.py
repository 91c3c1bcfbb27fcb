"""The pflag-compatible pieces: Go durations, strconv, parsing and help wrapping, error aggregation."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kube_apiserver.apimachinery import goduration, gostrconv
from kube_apiserver.cli.aggregate import aggregate_message
from kube_apiserver.cli.flagset import NamedFlagSets
from kube_apiserver.cli.parse import FlagError, parse_args
from kube_apiserver.cli.usage import flag_usages_wrapped, wrap


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0", 0),
        ("1m0s", 60_000_000_000),
        ("1h0m0s", 3_600_000_000_000),
        ("1.5h", 5_400_000_000_000),
        ("-2s", -2_000_000_000),
        ("300ms", 300_000_000),
        ("1us", 1_000),
        ("1\u00b5s", 1_000),
        (".5s", 500_000_000),
        ("2h45m10.5s", 9_910_500_000_000),
    ],
)
def test_parse_duration(text, ns):
    assert goduration.parse_duration_ns(text) == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("abc", 'time: invalid duration "abc"'),
        ("5", 'time: missing unit in duration "5"'),
        ("5d", 'time: unknown unit "d" in duration "5d"'),
        ("1m 5s", 'time: unknown unit "m " in duration "1m 5s"'),
    ],
)
def test_parse_duration_errors(text, message):
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.") + "$"):
        goduration.parse_duration_ns(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (60, "1m0s"),
        (3600, "1h0m0s"),
        (300, "5m0s"),
        (1.5, "1.5s"),
        (0.25, "250ms"),
        (90061, "25h1m1s"),
    ],
)
def test_format_duration(seconds, text):
    assert goduration.format_duration(seconds) == text


def test_strconv():
    assert gostrconv.parse_int("0x10") == 16
    assert gostrconv.parse_int("010") == 8
    assert gostrconv.parse_bool("T") is True
    with pytest.raises(ValueError, match=r'^strconv\.ParseInt: parsing " 5": invalid syntax$'):
        gostrconv.parse_int(" 5")


@dataclass
class Target:
    name: str = "x"
    count: int = 1
    enabled: bool = False
    items: list[str] = field(default_factory=list)


def flag_sets(target: Target) -> NamedFlagSets:
    fss = NamedFlagSets()
    fs = fss.flag_set("test")
    fs.string_var(target, "name", "name", "the name")
    fs.int_var(target, "count", "count", "how many")
    fs.bool_var(target, "enabled", "enabled", "turn it on", shorthand="e")
    fs.string_slice_var(target, "items", "items", "the `things` to use")
    return fss


def test_parse_args_positional_and_terminator():
    target = Target()
    rest = parse_args(flag_sets(target), ["a", "--count=3", "b", "--", "--name=ignored"])
    assert rest == ["a", "b", "--name=ignored"]
    assert (target.count, target.name) == (3, "x")


def test_parse_args_bool_shorthand_and_bad_syntax():
    target = Target()
    parse_args(flag_sets(target), ["-e"])
    assert target.enabled is True
    with pytest.raises(FlagError, match="^bad flag syntax: ---x$"):
        parse_args(flag_sets(Target()), ["---x"])


def test_flag_usages_alignment_and_defaults():
    fss = flag_sets(Target())
    text = flag_usages_wrapped(fss.sets["test"].sorted_flags(), 0)
    assert text.splitlines() == [
        "      --count int      how many (default 1)",
        "  -e, --enabled        turn it on",
        "      --items things   the things to use",
        '      --name string    the name (default "x")',
    ]


def test_wrap():
    assert wrap(4, 0, "a\nb") == "a\n    b"
    assert wrap(10, 40, "one two three four five six seven eight nine") == (
        "one two three four five\n          six seven eight nine"
    )


def test_aggregate_message():
    assert aggregate_message([]) == ""
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"
    assert aggregate_message(["a", "a"]) == "a"
