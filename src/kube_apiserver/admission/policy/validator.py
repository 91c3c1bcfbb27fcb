"""Evaluating one policy for one binding and param (validating/validator.go and policy_decision.go):
match conditions, then every validation (with its message), then the audit annotations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...cel import EvaluationError
from ...cel.values import type_name
from .compile import CompiledPolicy, Expression, Validation
from .inputs import Scope

ADMIT, DENY = "admit", "deny"
EVAL_ADMIT, EVAL_ERROR, EVAL_DENY = "admit", "error", "deny"
PUBLISH, ANNOTATION_ERROR, EXCLUDE = "publish", "error", "exclude"
MAX_MESSAGE_BYTES = 5 * 1024  # celconfig.MaxEvaluatedMessageExpressionSizeBytes
REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


def reason_to_code(reason: str) -> int:
    return REASON_CODES.get(reason, 422)


@dataclass
class Decision:
    action: str
    evaluation: str
    message: str = ""
    reason: str = ""


@dataclass
class AuditAnnotationResult:
    key: str
    action: str
    value: str = ""
    error: str = ""


@dataclass
class ValidateResult:
    decisions: list[Decision] = field(default_factory=list)
    audit_annotations: list[AuditAnnotationResult] = field(default_factory=list)


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error()."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


async def evaluate(expression: Expression, scope: Scope) -> Any:
    """activation.Evaluate: the value, or EvaluationError worded as the admission plugins word it."""
    if expression.error:
        raise EvaluationError(f"compilation error: {expression.error}")
    try:
        return await scope.run(expression)
    except EvaluationError as err:
        raise EvaluationError(f"expression '{expression.text}' resulted in error: {err}") from None


async def evaluate_bool(expression: Expression, scope: Scope) -> bool:
    value = await evaluate(expression, scope)
    if type(value) is not bool:
        # cel-go refuses this when compiling; without static types it shows once evaluated
        raise EvaluationError(f"compilation error: must evaluate to bool but got {type_name(value)}")
    return value


async def match_conditions(policy: CompiledPolicy, scope: Scope) -> tuple[bool, str]:
    """matchconditions.Matcher.Match: a false condition wins over errors in the others."""
    errors: list[str] = []
    for _name, condition in policy.match_conditions:
        try:
            if not await evaluate_bool(condition, scope):
                return False, ""
        except EvaluationError as err:
            errors.append(str(err))
    if errors:
        return False, aggregate(errors) if policy.failure_policy != "Ignore" else ""
    return True, ""


async def message_for(validation: Validation, scope: Scope) -> str:
    """The message of a failed validation: its messageExpression's value when usable, else its
    message, else the expression."""
    message = ""
    if validation.message_expression is not None:
        try:
            value = await evaluate(validation.message_expression, scope)
        except EvaluationError:
            value = None  # logged upstream; the static message stands in
        if isinstance(value, str):
            message = value.strip()
            if len(message.encode()) > MAX_MESSAGE_BYTES or "\n" in message:
                message = ""
    if not message and validation.message:
        message = validation.message.strip()
    return message or f"failed expression: {validation.expression.text.strip()}"


async def _decide(validation: Validation, scope: Scope, on_error: str) -> Decision:
    try:
        passed = await evaluate_bool(validation.expression, scope)
    except EvaluationError as err:
        return Decision(on_error, EVAL_ERROR, str(err))
    if passed:
        return Decision(ADMIT, EVAL_ADMIT)
    return Decision(DENY, EVAL_DENY, await message_for(validation, scope), validation.reason or "Invalid")


async def _annotation(key: str, expression: Expression, scope: Scope, fail: bool) -> AuditAnnotationResult:
    try:
        value = await evaluate(expression, scope)
    except EvaluationError as err:
        return AuditAnnotationResult(key, ANNOTATION_ERROR if fail else EXCLUDE, error=str(err))
    if value is None:
        return AuditAnnotationResult(key, EXCLUDE)
    if isinstance(value, str):
        value = value.strip()
        return AuditAnnotationResult(key, PUBLISH, value) if value else AuditAnnotationResult(key, EXCLUDE)
    return AuditAnnotationResult(key, ANNOTATION_ERROR, error=(
        f"valueExpression '{expression.text}' resulted in unsupported return type: {type_name(value)}. "
        "Return type must be either string or null."))


async def validate(policy: CompiledPolicy, match_scope: Scope, scope: Scope) -> ValidateResult:
    """validator.Validate; `match_scope` is the match conditions' activation (no namespaceObject,
    the request as made), `scope` the validations'."""
    fail = policy.failure_policy != "Ignore"
    on_error = DENY if fail else ADMIT
    if policy.match_conditions:
        matches, error = await match_conditions(policy, match_scope)
        if error:
            return ValidateResult([Decision(on_error, EVAL_ERROR, error)])
        if not matches:
            return ValidateResult()
    decisions = [await _decide(validation, scope, on_error) for validation in policy.validations]
    annotations = [await _annotation(a.key, a.value_expression, scope, fail) for a in policy.audit_annotations]
    return ValidateResult(decisions, annotations)
