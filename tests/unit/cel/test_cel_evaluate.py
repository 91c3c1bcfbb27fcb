"""evaluate(): runtime errors in cel-go's words, results as plain Python, activations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kube_apiserver import cel


@pytest.mark.parametrize(("expression", "message"), [
    ("self.missing", "no such key: missing"),
    ("self['missing']", "no such key: missing"),
    ("1 / 0", "division by zero"),
    ("1 % 0", "modulus by zero"),
    ("9223372036854775807 + 1", "integer overflow"),
    ("1 + 'a'", "no such overload"),
    ("self.a.b", "no such overload"),
    ("[1, 2][5]", "index out of bounds: 5"),
    ("'abc'.charAt(9)", "index out of range: 9"),
    ("'abc'.lowerAscii(1)", "no such overload"),
    ("self.lowerAscii()", "no such overload"),
    ("quantity('x')", "quantities must match the regular expression "
                      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
])
def test_runtime_errors(err: Callable[..., str], expression: str, message: str) -> None:
    assert err(expression, self={"a": 1}) == message


def test_results_are_plain_python(ev: Callable[..., Any]) -> None:
    assert ev("{'a': [1, 2.5, 'x', true, null]}") == {"a": [1, 2.5, "x", True, None]}
    assert ev("b'ab'") == b"ab"


def test_opaque_results(ev: Callable[..., Any]) -> None:
    result = ev("[ip('10.0.0.1'), quantity('1k')]")
    assert result == [cel.Opaque("net.IP", "10.0.0.1"), cel.Opaque("kubernetes.Quantity", "1000")]
    assert str(result[0]) == "10.0.0.1"


def test_activation_is_shared_by_programs() -> None:
    activation = cel.Activation({"self": {"replicas": 3, "name": "web"}})
    assert cel.compile("self.replicas > 1").evaluate(activation) is True
    assert cel.compile("self.name.upperAscii()").evaluate(activation) == "WEB"
    with pytest.raises(cel.EvaluationError, match="no such key: other"):
        cel.compile("self.other").evaluate(activation)


def test_missing_variable_at_run_time() -> None:
    with pytest.raises(cel.EvaluationError, match="undeclared reference to 'oldSelf'"):
        cel.compile("oldSelf.a == 1").evaluate({})


def test_logical_operators_absorb_errors(ev: Callable[..., Any]) -> None:
    assert ev("self.missing || true", self={}) is True
    assert ev("false && self.missing", self={}) is False


def test_bool_conversion(ev: Callable[..., Any], err: Callable[..., str]) -> None:
    assert ev("bool('true') && !bool('0') && bool(true)") is True
    assert err("bool('yes')") == "type conversion error from 'string' to 'bool'"


def test_string_conversion_errors(err: Callable[..., str]) -> None:
    # cel-go's String.ConvertToType: the words do not depend on why the text does not parse
    assert err("int(self)", self="x") == "type conversion error from 'string' to 'int'"
    assert err("duration(self)", self="soon") == "type conversion error from 'string' to 'google.protobuf.Duration'"
    assert err("timestamp(self)", self="2020-01-01") == (
        "type conversion error from 'string' to 'google.protobuf.Timestamp'")


def test_heterogeneous_numeric_equality(ev: Callable[..., Any]) -> None:
    assert ev("self.n == 1", self={"n": 1.0}) is True
    assert ev("[1, 2].indexOf(2.0)") == 1


def test_regex_errors_read_as_go_regexp_errors(err: Callable[..., str]) -> None:
    assert err("self.all(x, x.matches(self[0]))", self=["("]) == "error parsing regexp: unclosed group: `(`"
