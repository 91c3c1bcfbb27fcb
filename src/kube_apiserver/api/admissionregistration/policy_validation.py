"""Validation of ValidatingAdmissionPolicy (spec and status) and ValidatingAdmissionPolicyBinding
(pkg/apis/admissionregistration/validation, v1.34). CEL expressions are compiled with the server's
CEL environment; a compile error is the field's Invalid value."""

from __future__ import annotations

import re
from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path
from ...apimachinery.schema import parse_group_version
from ..policy.conditions import validate_conditions
from .defaults import as_dict, as_list, dicts
from .validation import (
    FAILURE_POLICIES,
    MATCH_POLICIES,
    compile_error,
    validate_match_conditions,
    validate_rule_with_operations,
)

Object = dict[str, Any]
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_VALUE_EXPRESSION_LENGTH = 5 * 1024
REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge")
VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
NOT_FOUND_ACTIONS = ("Deny", "Allow")
CEL_RESERVED = frozenset(("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                          "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                          "void", "while"))
# What policy expressions may read: params only with a paramKind; messageExpression no authorizer.
POLICY_VARIABLES = ("object", "oldObject", "request", "namespaceObject", "variables", "authorizer")
_cel_identifier = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*").fullmatch
_newline = re.compile(r"[\n\r]+").search


def validate_param_kind(kind: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    api_version = kind.get("apiVersion") or ""
    parsed = parse_group_version(api_version)
    if not api_version:
        errs.append(field.required(path.child("apiVersion"), ""))
    elif parsed is None:
        errs.append(field.invalid(path.child("apiVersion"), api_version,
                                  f"unexpected GroupVersion string: {api_version}"))
    else:
        group, version = parsed
        if group and (msgs := validation.is_dns1123_subdomain(group)):
            errs.append(field.invalid(path.child("apiVersion"), group, ",".join(msgs)))
        if not version:
            errs.append(field.invalid(path.child("apiVersion"), api_version, "version must be specified"))
        elif msgs := validation.is_dns1035_label(version):
            errs.append(field.invalid(path.child("apiVersion"), version, ",".join(msgs)))
    name = kind.get("kind") or ""
    if not name:
        errs.append(field.required(path.child("kind"), ""))
    elif msgs := validation.is_dns1035_label(name.lower()):
        errs.append(field.invalid(path.child("kind"), name,
                                  "may have mixed case, but should otherwise match: " + ",".join(msgs)))
    return errs


def validate_named_rule(rule: Object, path: Path) -> ErrorList:
    """validateNamedRuleWithOperations: resource names, then the rule."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, name in enumerate(as_list(rule.get("resourceNames"))):
        errs += [field.invalid(path.child("resourceNames").index(i), name, m)
                 for m in validation.validate_path_segment_name(name, False)]
        if name in seen:
            errs.append(field.duplicate(path.child("resourceNames").index(i), name))
        seen.add(name)
    return errs + validate_rule_with_operations(rule, path)


def validate_match_resources(match: Object | None, path: Path) -> ErrorList:
    if match is None:
        return []
    errs: ErrorList = []
    policy = match.get("matchPolicy")
    if policy is None:
        errs.append(field.required(path.child("matchPolicy"), ""))
    elif policy not in MATCH_POLICIES:
        errs.append(field.not_supported(path.child("matchPolicy"), policy, MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            errs.append(field.required(path.child(key), ""))
        else:  # strict: these types came after label values were validated
            errs += validation.validate_label_selector(as_dict(match[key]), path.child(key))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(dicts(match.get(key))):
            errs += validate_named_rule(rule, path.child(key).index(i))
    return errs


def policy_variables(params: bool, authorizer: bool = True) -> tuple[str, ...]:
    declared = POLICY_VARIABLES if authorizer else POLICY_VARIABLES[:-1]
    return declared + (("params",) if params else ())


def validate_variable(variable: Object, path: Path, params: bool) -> ErrorList:
    errs: ErrorList = []
    name, expression = variable.get("name") or "", variable.get("expression") or ""
    if not name.strip():
        errs.append(field.required(path.child("name"), "name is not specified"))
    elif not _cel_identifier(name) or name in CEL_RESERVED:
        errs.append(field.invalid(path.child("name"), name, "name is not a valid CEL identifier"))
    if not expression.strip():
        errs.append(field.required(path.child("expression"), "expression is not specified"))
    else:
        errs += compile_error(path.child("expression"), expression, policy_variables(params))
    return errs


def validate_validation(rule: Object, path: Path, params: bool) -> ErrorList:
    errs: ErrorList = []
    expression, message = rule.get("expression") or "", rule.get("message") or ""
    message_expression = rule.get("messageExpression") or ""
    if not expression.strip():
        errs.append(field.required(path.child("expression"), "expression is not specified"))
    else:
        errs += compile_error(path.child("expression"), expression, policy_variables(params))
    if message_expression and not message_expression.strip():
        errs.append(field.invalid(path.child("messageExpression"), message_expression,
                                  "must be non-empty if specified"))
    elif message_expression:
        errs += compile_error(path.child("messageExpression"), message_expression, policy_variables(params, False))
    if message and not message.strip():
        errs.append(field.invalid(path.child("message"), message, "message must be non-empty if specified"))
    elif _newline(message.strip()):
        errs.append(field.invalid(path.child("message"), message, "message must not contain line breaks"))
    if rule.get("reason") is not None and rule["reason"] not in REASONS:
        errs.append(field.not_supported(path.child("reason"), rule["reason"], REASONS))
    return errs


def validate_audit_annotation(policy_name: str, annotation: Object, path: Path, params: bool) -> ErrorList:
    key = annotation.get("key") or ""
    if policy_name:
        qualified = f"{policy_name}/{key}"
        errs = [field.invalid(path.child("key"), qualified, m) for m in validation.is_qualified_name(qualified)]
    else:
        errs = [field.invalid(path.child("key"), key, "requires metadata.name be non-empty")]
    value = annotation.get("valueExpression") or ""
    trimmed = value.strip()
    if not trimmed:
        errs.append(field.required(path.child("valueExpression"), "valueExpression is not specified"))
    elif len(trimmed.encode()) > MAX_AUDIT_VALUE_EXPRESSION_LENGTH:
        errs.append(field.required(path.child("valueExpression"),
                                   f"must not exceed {MAX_AUDIT_VALUE_EXPRESSION_LENGTH} bytes in length"))
    else:
        errs += compile_error(path.child("valueExpression"), trimmed, policy_variables(params), value)
    return errs


def _validate_checks(name: str, spec: Object, path: Path, params: bool) -> ErrorList:
    """The validations and audit annotations: at least one of them."""
    validations, annotations = as_list(spec.get("validations")), spec.get("auditAnnotations")
    if not validations and not annotations:
        why = "validations or auditAnnotations must contain at least one item"
        return [field.required(path.child("validations"), why), field.required(path.child("auditAnnotations"), why)]
    errs: ErrorList = []
    for i, rule in enumerate(dicts(validations)):
        errs += validate_validation(rule, path.child("validations").index(i), params)
    annotations = as_list(annotations)
    if len(annotations) > MAX_AUDIT_ANNOTATIONS:
        errs.append(field.invalid(path.child("auditAnnotations"), annotations,
                                  f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
    keys: set[str] = set()
    for i, annotation in enumerate(dicts(annotations)):
        errs += validate_audit_annotation(name, annotation, path.child("auditAnnotations").index(i), params)
        key = annotation.get("key") or ""
        if key in keys:
            errs.append(field.duplicate(path.child("auditAnnotations").index(i).child("key"), key))
        keys.add(key)
    return errs


def validate_policy_spec(name: str, spec: Object, ignore_match_conditions: bool) -> ErrorList:
    """validateValidatingAdmissionPolicySpec."""
    path, errs = Path("spec"), []
    policy = spec.get("failurePolicy")
    if policy is None:
        errs.append(field.required(path.child("failurePolicy"), ""))
    elif policy not in FAILURE_POLICIES:
        errs.append(field.not_supported(path.child("failurePolicy"), policy, FAILURE_POLICIES))
    if spec.get("paramKind") is not None:
        errs += validate_param_kind(as_dict(spec["paramKind"]), path.child("paramKind"))
    constraints = spec.get("matchConstraints")
    if constraints is None:
        errs.append(field.required(path.child("matchConstraints"), ""))
    else:
        errs += validate_match_resources(as_dict(constraints), path.child("matchConstraints"))
        if not as_list(as_dict(constraints).get("resourceRules")):  # the rules give the type information
            errs.append(field.required(path.child("matchConstraints", "resourceRules"), ""))
    if not ignore_match_conditions:
        errs += validate_match_conditions(as_list(spec.get("matchConditions")), path.child("matchConditions"),
                                          spec.get("paramKind") is not None)
    params = spec.get("paramKind") is not None
    for i, variable in enumerate(dicts(spec.get("variables"))):
        errs += validate_variable(variable, path.child("variables").index(i), params)
    return errs + _validate_checks(name, spec, path, params)


def policy_match_conditions_unchanged(new: Object, old: Object) -> bool:
    """ignoreValidatingAdmissionPolicyMatchConditions: paramKind and matchConditions as stored."""
    new_spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    return all(new_spec.get(key) == old_spec.get(key) for key in ("paramKind", "matchConditions"))


def validate_policy_status(status: Object) -> ErrorList:
    """validateValidatingAdmissionPolicyStatus: type-checking warnings and conditions."""
    path = Path("status")
    errs: ErrorList = []
    checking = status.get("typeChecking")
    for i, warning in enumerate(dicts(as_dict(checking).get("expressionWarnings"))):
        at = path.child("typeChecking", "expressionWarnings").index(i)
        if not warning.get("warning"):
            errs.append(field.required(at.child("warning"), ""))
        if not str(warning.get("fieldRef") or "").strip():
            errs.append(field.required(at.child("fieldRef"), ""))
    return errs + validate_conditions(dicts(status.get("conditions")), path.child("conditions"))


def validate_param_ref(ref: Object | None, path: Path) -> ErrorList:
    if ref is None:
        return []
    errs: ErrorList = []
    name, selector = ref.get("name") or "", ref.get("selector")
    if name:
        errs += [field.invalid(path.child("name"), name, m)
                 for m in validation.validate_path_segment_name(name, False)]
        if selector is not None:
            errs.append(field.forbidden(path.child("name"), "name and selector are mutually exclusive"))
    if selector is not None:
        errs += validation.validate_label_selector(as_dict(selector), path.child("selector"))
        if name:
            errs.append(field.forbidden(path.child("selector"), "name and selector are mutually exclusive"))
    if not name and selector is None:
        errs.append(field.required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        errs.append(field.required(path.child("parameterNotFoundAction"), ""))
    elif action not in NOT_FOUND_ACTIONS:
        errs.append(field.not_supported(path.child("parameterNotFoundAction"), action, NOT_FOUND_ACTIONS))
    return errs


def validate_actions(actions: list[Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(field.not_supported(path.index(i), action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(field.duplicate(path.index(i), action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(field.invalid(path, actions, "must not contain both Deny and Warn (repeating the same validation "
                                                 "failure information in the API response and headers serves no "
                                                 "purpose)"))
    if not seen:
        errs.append(field.required(path, "at least one validation action is required"))
    return errs


def validate_binding_spec(spec: Object) -> ErrorList:
    """validateValidatingAdmissionPolicyBindingSpec (its matchResources path is misspelled upstream)."""
    path, errs = Path("spec"), []
    policy_name = spec.get("policyName") or ""
    if not policy_name:
        errs.append(field.required(path.child("policyName"), ""))
    else:
        errs += [field.invalid(path.child("policyName"), policy_name, m)
                 for m in validation.name_is_dns_subdomain(policy_name, False)]
    ref = spec.get("paramRef")
    errs += validate_param_ref(None if ref is None else as_dict(ref), path.child("paramRef"))
    match = spec.get("matchResources")
    errs += validate_match_resources(None if match is None else as_dict(match), path.child("matchResouces"))
    return errs + validate_actions(as_list(spec.get("validationActions")), path.child("validationActions"))
