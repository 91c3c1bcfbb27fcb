"""How apiextensions words the outcome of x-kubernetes-validations rules
(k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go), for the layer that runs them:
the texts here are the `detail` of the field.Invalid errors it builds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kube_apiserver.cel.errors import NO_SUCH_OVERLOAD, CompileError, EvaluationError

MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES = 5 * 1024
NOT_BOOL = "cel expression must evaluate to a bool"
MESSAGE_NOT_STRING = "messageExpression must evaluate to a string"


def rule_error_string(rule: str, message: str = "") -> str:
    """ruleErrorString: the rule's message if it has one, else the rule."""
    return message.strip() or rule.strip()


def rule_message_or_default(rule: str, message: str = "") -> str:
    """ruleMessageOrDefault: the detail of a rule that evaluated to false."""
    return message.strip() or f"failed rule: {rule.strip()}"


def rule_compile_error(error: CompileError) -> str:
    return f"rule compile error: {error}"


def message_expression_compile_error(error: CompileError) -> str:
    return f"messageExpression compilation failed: {error.issues}"


def rule_evaluation_error(error: EvaluationError | str, rule: str, message: str = "") -> str:
    """The detail of a rule whose evaluation failed."""
    text = str(error)
    if text.startswith(NO_SUCH_OVERLOAD):
        return (f"'{text}': call arguments did not match a supported operator, function or macro signature "
                f"for rule: {rule_error_string(rule, message)}")
    return f"{text} evaluating rule: {rule_error_string(rule, message)}"


def evaluate_message_expression(program: Any, activation: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """evalMessageExpression: (message, None) or (None, the detail of why it cannot be used). When it
    cannot, apiextensions falls back to `rule_message_or_default`."""
    try:
        result = program.evaluate(activation)
    except EvaluationError as err:
        return None, f"messageExpression evaluation failed due to: {err}"
    if not isinstance(result, str):
        return None, "messageExpression failed to convert to string"
    text = result.strip()
    if len(text.encode()) > MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES:
        return None, f"messageExpression beyond allowable length of {MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES}"
    if "\n" in text:
        return None, "messageExpression should not contain line breaks"
    if not text:
        return None, "messageExpression should evaluate to a non-empty string"
    return text, None
