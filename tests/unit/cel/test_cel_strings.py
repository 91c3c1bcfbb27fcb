"""cel-go ext.Strings (version 2) as Kubernetes enables it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.mark.parametrize(("expression", "expected"), [
    ("'tacocat'.charAt(3)", "o"), ("'tacocat'.charAt(7)", ""), ("'©αT'.charAt(1)", "α"),
    ("'tacocat'.indexOf('')", 0), ("'tacocat'.indexOf('ac')", 1), ("'tacocat'.indexOf('none') == -1", True),
    ("'tacocat'.indexOf('', 3)", 3), ("'tacocat'.indexOf('a', 3)", 5), ("'tacocat'.indexOf('at', 3)", 5),
    ("'ta©o©αT'.indexOf('©')", 2), ("'ta©o©αT'.indexOf('©', 3)", 4), ("'hello'.indexOf('', 9)", 5),
    ("'tacocat'.lastIndexOf('')", 7), ("'tacocat'.lastIndexOf('at')", 5), ("'tacocat'.lastIndexOf('none') == -1", True),
    ("'tacocat'.lastIndexOf('', 3)", 3), ("'tacocat'.lastIndexOf('a', 3)", 1), ("'ta©o©αT'.lastIndexOf('©')", 4),
    ("'ta©o©αT'.lastIndexOf('©', 3)", 2), ("'abc'.lastIndexOf('c', 3)", -1), ("'a'.lastIndexOf('abc')", -1),
    ("'TacoCat'.lowerAscii()", "tacocat"), ("'TacoCÆt Xii'.lowerAscii()", "tacocÆt xii"),
    ("'tacoCat'.upperAscii()", "TACOCAT"), ("'tacoCαt'.upperAscii()", "TACOCαT"),
    ("'12 days 12 hours'.replace('{0}', '2')", "12 days 12 hours"),
    ("'{0} days {0} hours'.replace('{0}', '2')", "2 days 2 hours"),
    ("'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23')", "2 days 23 hours"),
    ("'1 ©αT taco'.replace('αT', 'o©α')", "1 ©o©α taco"), ("'abc'.replace('', '-')", "-a-b-c-"),
    ("'hello world'.split(' ')", ["hello", "world"]), ("'hello world events!'.split(' ', 0)", []),
    ("'hello world events!'.split(' ', 1)", ["hello world events!"]),
    ("'o©o©o©o'.split('©', -1)", ["o", "o", "o", "o"]), ("'abc'.split('')", ["a", "b", "c"]),
    ("'abc'.split('', 2)", ["a", "bc"]), ("''.split(',')", [""]),
    ("'tacocat'.substring(4)", "cat"), ("'tacocat'.substring(7)", ""), ("'tacocat'.substring(0, 4)", "taco"),
    ("'tacocat'.substring(4, 4)", ""), ("'ta©o©αT'.substring(2, 6)", "©o©α"),
    ("'  \\ttrim\\n    '.trim()", "trim"), ("'\\x1ftrim'.trim()", "\x1ftrim"), ("'\\u00a0x\\u3000'.trim()", "x"),
    ("['x', 'y'].join()", "xy"), ("['x', 'y'].join('-')", "x-y"), ("[].join('-')", ""),
    ("strings.quote('first\\nsecond')", '"first\\nsecond"'), ("strings.quote('bell\\a\"')", '"bell\\a\\""'),
    ("strings.quote('ü')", '"ü"'),
])
def test_strings(ev: Callable[..., Any], expression: str, expected: object) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("'tacocat'.charAt(30)", "index out of range: 30"),
    ("'tacocat'.indexOf('a', 30) == -1", None),
    ("'tacocat'.indexOf('a', -1)", "index out of range: -1"),
    ("'tacocat'.lastIndexOf('a', -1)", "index out of range: -1"),
    ("'tacocat'.substring(40)", "index out of range: 40"),
    ("'tacocat'.substring(-1)", "index out of range: -1"),
    ("'tacocat'.substring(1, 50)", "index out of range: 50"),
    ("'tacocat'.substring(4, 3)", "invalid substring range. start: 4, end: 3"),
    ("['x', 1].join()", "join: invalid input: 1"),
    ("'abc'.charAt('a')", "no such overload"),
])
def test_string_errors(ev: Callable[..., Any], err: Callable[..., str], expression: str, message: str | None) -> None:
    if message is None:
        assert ev(expression) is True
    else:
        assert err(expression) == message


@pytest.mark.parametrize(("expression", "expected"), [
    ("'no substitution'.format([])", "no substitution"),
    ("'str is %s and some more'.format(['filler'])", "str is filler and some more"),
    ("'%% and also %%'.format([])", "% and also %"),
    ("'%d %s %s'.format([1, true, null])", "1 true null"),
    ("'%.3f'.format([1.2345])", "1.234"), ("'%f'.format([2.71828])", "2.718280"),
    ("'%.2f'.format([1234567.891])", "1,234,567.89"), ("'%f'.format(['NaN'])", "NaN"),
    ("'%f'.format(['Infinity'])", "∞"),
    ("'this is 5 in binary: %b'.format([5])", "this is 5 in binary: 101"),
    ("'this is -5 in binary: %b'.format([-5])", "this is -5 in binary: -101"),
    ("'bit set from bool: %b'.format([true])", "bit set from bool: 1"),
    ("'%o'.format([11])", "13"), ("'%x is 30 in hexadecimal'.format([30])", "1e is 30 in hexadecimal"),
    ("'%X'.format([30])", "1E"), ("'%x'.format(['Hello world!'])", "48656c6c6f20776f726c6421"),
    ("'%X'.format([b'byte string'])", "6279746520737472696E67"),
    ("'%e'.format([1052.032911275])", "1.052033\u202f×\u202f10⁰³"),
    ("'%s'.format([2.0e-9])", "2e-09"), ("'%s'.format([[2.71]])", "[2.710000]"),
    ("'%s'.format([1234567.0])", "1.234567e+06"), ("'%s'.format([100000.0])", "100000"),
    ("'%s'.format([['abc', 3.14, null, [9, 8]]])", '["abc", 3.140000, null, [9, 8]]'),
    ("'%s'.format([{'key1': b'xyz', 'key3': 2.71828, 'key4': true}])",
     '{"key1":b"xyz", "key3":2.718280, "key4":true}'),
    # (a map mixing true and 1 as keys cannot cross into Python, where True == 1)
    ("'%s'.format([{2: 'value2', 1: 'value1'}])", '{1:"value1", 2:"value2"}'),
    ("'%s'.format([{true: 'NaN'}])", '{true:"NaN"}'),
    ("'%s'.format([duration('6347s')])", "6347s"),
    ("'%s'.format([timestamp('2023-02-03T23:31:20Z')])", "2023-02-03T23:31:20Z"),
])
def test_format(ev: Callable[..., Any], expression: str, expected: str) -> None:
    assert ev(expression) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("'%a'.format([1])", 'could not parse formatting clause: unrecognized formatting clause "a"'),
    ("'%s %s'.format(['a'])", "index 1 out of range"),
    ("'%b'.format(['a'])", "error during formatting: only integers and bools can be formatted as binary, "
                           "was given string"),
    ("'%d'.format([duration('1s')])", "error during formatting: decimal clause can only be used on integers, "
                                      "was given google.protobuf.Duration"),
    ("'%x'.format([1.5])", "error during formatting: only integers, byte buffers, and strings can be "
                           "formatted as hex, was given double"),
    ("'%f'.format([null])", "error during formatting: fixed-point clause can only be used on doubles, "
                            "was given null_type"),
    ("'%'.format([1])", "unexpected end of string"),
    ("'%.3'.format([1.0])", "could not parse formatting clause: error while parsing precision: "
                            "could not find end of precision specifier"),
])
def test_format_errors(err: Callable[..., str], expression: str, message: str) -> None:
    assert err(expression) == message
