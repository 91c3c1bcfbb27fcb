"""Compiling and evaluating one policy: decisions and their messages (message, messageExpression and
their fallbacks), reasons, failure policies, match conditions, variables evaluated on first use with
cel-go's error wording, audit annotation results."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kube_apiserver.admission.policy.compile import compile_policy
from kube_apiserver.admission.policy.inputs import Scope
from kube_apiserver.admission.policy.validator import (
    ADMIT,
    ANNOTATION_ERROR,
    DENY,
    EVAL_ADMIT,
    EVAL_DENY,
    EVAL_ERROR,
    EXCLUDE,
    PUBLISH,
    AuditAnnotationResult,
    Decision,
    ValidateResult,
    reason_to_code,
    validate,
)

OBJECT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"team": "a"}},
          "spec": {"replicas": 7}}
BASE = {"object": OBJECT, "oldObject": None, "params": None, "namespaceObject": None,
        "request": {"operation": "CREATE", "namespace": "default"}}


def policy(validations: list[dict[str, Any]] | None = None, **spec: Any) -> Any:
    return compile_policy({"metadata": {"name": "p"}, "spec": {"validations": validations or [], **spec}})


def evaluate(compiled: Any, base: dict[str, Any] = BASE) -> ValidateResult:
    return asyncio.run(validate(compiled, Scope(compiled, base, None), Scope(compiled, base, None)))


def decision(expression: str, **validation: Any) -> Decision:
    [found] = evaluate(policy([{"expression": expression, **validation}])).decisions
    return found


def test_passing_and_failing_validations() -> None:
    assert decision("object.spec.replicas > 5") == Decision(ADMIT, EVAL_ADMIT)
    assert decision("object.spec.replicas <= 5") == Decision(DENY, EVAL_DENY, "failed expression: "
                                                             "object.spec.replicas <= 5", "Invalid")
    assert decision(" object.spec.replicas <= 5 ", message="  too many  ", reason="Forbidden") == \
        Decision(DENY, EVAL_DENY, "too many", "Forbidden")


@pytest.mark.parametrize(("message_expression", "expected"), [
    ("'replicas: ' + string(object.spec.replicas)", "replicas: 7"),
    ("'  padded  '", "padded"),
    ("object.spec.replicas", "static"),  # not a string
    ("'a\\nb'", "static"),  # line breaks
    ("'x'.repeat(10)", "static"),  # an evaluation error
    ("'" + "x" * 5121 + "'", "static"),  # too long
    ("''", "static"),
])
def test_message_expression_and_its_fallbacks(message_expression: str, expected: str) -> None:
    found = decision("false", message="static", messageExpression=message_expression)
    assert found.message == expected


def test_message_expression_falls_back_to_the_expression() -> None:
    assert decision("false", messageExpression="1").message == "failed expression: false"


def test_errors_follow_the_failure_policy() -> None:
    failed = decision("object.spec.paused")
    assert failed == Decision(DENY, EVAL_ERROR, "expression 'object.spec.paused' resulted in error: "
                                                "no such key: paused")
    [ignored] = evaluate(policy([{"expression": "object.spec.paused"}], failurePolicy="Ignore")).decisions
    assert ignored.action == ADMIT and ignored.evaluation == EVAL_ERROR
    assert decision("object.spec.replicas").message == "compilation error: must evaluate to bool but got int"
    compile_failed = decision("undeclared_thing")
    assert compile_failed.message.startswith("compilation error: compilation failed: ERROR: <input>:1:1: "
                                             "undeclared reference to 'undeclared_thing'")


def test_params_need_a_param_kind() -> None:
    assert decision("params == null").message.startswith(
        "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'params'")
    compiled = policy([{"expression": "params == null"}], paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    assert evaluate(compiled).decisions == [Decision(ADMIT, EVAL_ADMIT)]


def test_match_conditions() -> None:
    conditions = [{"name": "a", "expression": "object.metadata.name == 'web'"},
                  {"name": "b", "expression": "object.spec.nope"}]
    compiled = policy([{"expression": "false"}], matchConditions=conditions)
    assert evaluate(compiled).decisions == [Decision(DENY, EVAL_ERROR, "expression 'object.spec.nope' resulted "
                                                                       "in error: no such key: nope")]
    conditions.append({"name": "c", "expression": "object.metadata.name == 'other'"})
    assert evaluate(policy([{"expression": "false"}], matchConditions=conditions)).decisions == []  # false wins
    two_errors = [{"name": "a", "expression": "object.x"}, {"name": "b", "expression": "object.y"}]
    assert evaluate(policy([{"expression": "false"}], matchConditions=two_errors)).decisions[0].message == (
        "[expression 'object.x' resulted in error: no such key: x, "
        "expression 'object.y' resulted in error: no such key: y]")
    ignored = policy([{"expression": "false"}], matchConditions=two_errors, failurePolicy="Ignore")
    assert evaluate(ignored).decisions == []


def test_variables_are_evaluated_once_and_only_when_read() -> None:
    variables = [{"name": "replicas", "expression": "object.spec.replicas"},
                 {"name": "doubled", "expression": "variables.replicas * 2"},
                 {"name": "broken", "expression": "object.spec.nope"}]
    compiled = policy([{"expression": "variables.doubled == 14"}], variables=variables)
    scope = Scope(compiled, BASE, None)
    result = asyncio.run(validate(compiled, scope, scope))
    assert result.decisions == [Decision(ADMIT, EVAL_ADMIT)]
    assert scope.values == {"replicas": 7, "doubled": 14} and scope.errors == {}  # broken never read
    [failed] = evaluate(policy([{"expression": "variables.broken > 1"}], variables=variables)).decisions
    assert failed.message == ("expression 'variables.broken > 1' resulted in error: composited variable "
                              "\"broken\" fails to evaluate: no such key: nope")


def test_variables_hold_opaque_values_and_see_only_earlier_ones() -> None:
    variables = [{"name": "limit", "expression": "quantity('1Gi')"},
                 {"name": "early", "expression": "variables.late"},
                 {"name": "late", "expression": "1"}]
    ok = policy([{"expression": "variables.limit.isGreaterThan(quantity('1Mi'))"}], variables=variables)
    assert evaluate(ok).decisions == [Decision(ADMIT, EVAL_ADMIT)]
    [failed] = evaluate(policy([{"expression": "variables.early == 1"}], variables=variables)).decisions
    assert failed.message.startswith(
        "expression 'variables.early == 1' resulted in error: composited variable \"early\" fails to compile: "
        "compilation failed: ERROR: <input>:1:10: undefined field 'late'")
    [unknown] = evaluate(policy([{"expression": "variables.nope"}], variables=variables)).decisions
    assert unknown.message.startswith("compilation error: compilation failed: ERROR: <input>:1:10: "
                                      "undefined field 'nope'")


def test_message_expressions_cannot_use_the_authorizer() -> None:
    found = decision("false", messageExpression="string(authorizer)", message="static")
    assert found.message == "static"
    assert policy([{"expression": "false", "messageExpression": "string(authorizer)"}]) \
        .validations[0].message_expression.error.startswith("compilation failed")


def test_audit_annotations() -> None:
    annotations = [{"key": "a", "valueExpression": "'  v  '"}, {"key": "b", "valueExpression": "null"},
                   {"key": "c", "valueExpression": "''"}, {"key": "d", "valueExpression": "1"},
                   {"key": "e", "valueExpression": "object.nope"}]
    result = evaluate(policy(auditAnnotations=annotations))
    assert result.audit_annotations == [
        AuditAnnotationResult("a", PUBLISH, "v"), AuditAnnotationResult("b", EXCLUDE),
        AuditAnnotationResult("c", EXCLUDE),
        AuditAnnotationResult("d", ANNOTATION_ERROR, error="valueExpression '1' resulted in unsupported return "
                                                           "type: int. Return type must be either string or null."),
        AuditAnnotationResult("e", ANNOTATION_ERROR, error="expression 'object.nope' resulted in error: "
                                                           "no such key: nope")]
    ignored = evaluate(policy(auditAnnotations=annotations[4:], failurePolicy="Ignore"))
    assert ignored.audit_annotations[0].action == EXCLUDE


def test_reason_codes() -> None:
    assert [reason_to_code(r) for r in ("Forbidden", "Unauthorized", "RequestEntityTooLarge", "Invalid", "")] == \
        [403, 401, 413, 422, 422]
