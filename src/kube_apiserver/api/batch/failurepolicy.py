"""validatePodFailurePolicy (pkg/apis/batch/validation): the rules of spec.podFailurePolicy."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ..storage.common import validate_qualified_name

Object = dict[str, Any]
Path = field.Path
MAX_RULES = 20
MAX_EXIT_CODES = 255
MAX_CONDITION_PATTERNS = 20
ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")


def _quoted_list(values: tuple[str, ...]) -> str:
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _container_names(spec: Object) -> set[str]:
    pod_spec = ((spec.get("template") or {}).get("spec") or {})
    return {c.get("name") for key in ("containers", "initContainers") for c in pod_spec.get(key) or []
            if isinstance(c, dict)}


def validate_pod_failure_policy(spec: Object, path: Path) -> field.ErrorList:
    policy = spec["podFailurePolicy"] if isinstance(spec["podFailurePolicy"], dict) else {}
    rules, rules_path = policy.get("rules") or [], path.child("rules")
    errs: field.ErrorList = []
    if len(rules) > MAX_RULES:
        errs.append(field.too_many(rules_path, len(rules), MAX_RULES))
    names = _container_names(spec)
    for i, rule in enumerate(rules):
        errs += _rule(spec, rule if isinstance(rule, dict) else {}, rules_path.index(i), names)
    return errs


def _rule(spec: Object, rule: Object, path: Path, names: set[str]) -> field.ErrorList:
    action, action_path = rule.get("action") or "", path.child("action")
    errs: field.ErrorList = []
    if not action:
        errs.append(field.required(action_path, f"valid values: {_quoted_list(ACTIONS)}"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(field.invalid(action_path, action, "requires the backoffLimitPerIndex to be set"))
    elif action not in ACTIONS:
        errs.append(field.not_supported(action_path, action, ACTIONS))
    on_exit, on_conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
    if on_exit is not None:
        errs += _on_exit_codes(on_exit, path.child("onExitCodes"), names)
    if on_conditions:
        errs += _on_pod_conditions(on_conditions, path.child("onPodConditions"))
    if on_exit is not None and on_conditions:
        errs.append(field.invalid(path, field.OMIT_VALUE, "specifying both OnExitCodes and OnPodConditions is "
                                                          "not supported"))
    if on_exit is None and not on_conditions:
        errs.append(field.invalid(path, field.OMIT_VALUE, "specifying one of OnExitCodes and OnPodConditions is "
                                                          "required"))
    return errs


def _on_pod_conditions(patterns: list[Any], path: Path) -> field.ErrorList:
    errs: field.ErrorList = []
    if len(patterns) > MAX_CONDITION_PATTERNS:
        errs.append(field.too_many(path, len(patterns), MAX_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        pattern = pattern if isinstance(pattern, dict) else {}
        errs += validate_qualified_name(pattern.get("type") or "", path.index(j).child("type"))
        status, status_path = pattern.get("status") or "", path.index(j).child("status")
        if not status:
            errs.append(field.required(status_path, f"valid values: {_quoted_list(CONDITION_STATUSES)}"))
        elif status not in CONDITION_STATUSES:
            errs.append(field.not_supported(status_path, status, CONDITION_STATUSES))
    return errs


def _on_exit_codes(requirement: Any, path: Path, names: set[str]) -> field.ErrorList:
    requirement = requirement if isinstance(requirement, dict) else {}
    operator, operator_path = requirement.get("operator") or "", path.child("operator")
    errs: field.ErrorList = []
    if not operator:
        errs.append(field.required(operator_path, f"valid values: {_quoted_list(OPERATORS)}"))
    elif operator not in OPERATORS:
        errs.append(field.not_supported(operator_path, operator, OPERATORS))
    container = requirement.get("containerName")
    if container is not None and container not in names:
        errs.append(field.invalid(path.child("containerName"), container,
                                  "must be one of the container or initContainer names in the pod template"))
    return errs + _exit_code_values(requirement.get("values"), operator, path.child("values"))


def _exit_code_values(raw: list[int] | None, operator: str, path: Path) -> field.ErrorList:
    values = raw or []
    errs: field.ErrorList = []
    if not values:
        errs.append(field.invalid(path, raw, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODES:
        errs.append(field.too_many(path, len(values), MAX_EXIT_CODES))
    seen: set[int] = set()
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            errs.append(field.invalid(path.index(j), value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(field.duplicate(path.index(j), value))
        seen.add(value)
    if any(values[j - 1] > values[j] for j in range(1, len(values))):
        errs.append(field.invalid(path, values, "must be ordered"))
    return errs
