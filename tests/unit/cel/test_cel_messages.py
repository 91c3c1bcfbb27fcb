"""apiextensions' wording of rule outcomes."""

from __future__ import annotations

import pytest

from kube_apiserver import cel
from kube_apiserver.cel import messages


def test_rule_strings() -> None:
    assert messages.rule_error_string(" self.a > 0 ") == "self.a > 0"
    assert messages.rule_error_string("self.a > 0", " must be positive ") == "must be positive"
    assert messages.rule_message_or_default("self.a > 0") == "failed rule: self.a > 0"


def test_evaluation_errors() -> None:
    with pytest.raises(cel.EvaluationError) as caught:
        cel.compile("self.a + 'x'").evaluate({"self": {"a": 1}})
    assert messages.rule_evaluation_error(caught.value, "self.a + 'x'") == (
        "'no such overload': call arguments did not match a supported operator, function or macro signature "
        "for rule: self.a + 'x'")
    assert messages.rule_evaluation_error("no such key: a", "self.a > 0", "needs a") == \
        "no such key: a evaluating rule: needs a"


def test_compile_errors() -> None:
    with pytest.raises(cel.CompileError) as caught:
        cel.compile("self.a >")
    assert messages.rule_compile_error(caught.value).startswith("rule compile error: compilation failed: ERROR: ")
    assert messages.message_expression_compile_error(caught.value).startswith(
        "messageExpression compilation failed: ERROR: <input>:1:9:")


@pytest.mark.parametrize(("expression", "expected"), [
    ("'  too few: ' + string(self.n) + ' '", ("too few: 1", None)),
    ("self.n", (None, "messageExpression failed to convert to string")),
    ("'a\\nb'", (None, "messageExpression should not contain line breaks")),
    ("'  '", (None, "messageExpression should evaluate to a non-empty string")),
    ("'x'.repeat(1)", None),
    ("self.missing", (None, "messageExpression evaluation failed due to: no such key: missing")),
])
def test_message_expressions(expression: str, expected: tuple[str | None, str | None] | None) -> None:
    if expected is None:
        with pytest.raises(cel.CompileError):
            cel.compile(expression, variables=["self"])
        return
    program = cel.compile(expression, variables=["self"])
    assert messages.evaluate_message_expression(program, {"self": {"n": 1}}) == expected
