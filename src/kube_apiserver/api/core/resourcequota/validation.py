"""ResourceQuota validation (pkg/apis/core/validation: ValidateResourceQuota, ValidateResourceQuotaUpdate,
ValidateResourceQuotaStatusUpdate, and the quota helpers of pkg/apis/core/helper)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, quantity
from ....apimachinery.field import ErrorList, OrderedStruct, Path
from ...node.resources import (
    HUGEPAGES_PREFIX,
    REQUESTS_PREFIX,
    validate_quantity_value,
    validate_resource_name,
)

Object = dict[str, Any]
STANDARD_QUOTA_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
    "resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers"))
STANDARD_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                   "CrossNamespacePodAffinity")
POD_COUNT_RESOURCES = frozenset({"pods"})
POD_COMPUTE_RESOURCES = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"})
CONFLICTING_SCOPES = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))
EXISTS_ONLY = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity")
EXISTS_ONLY_MESSAGE = ("must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
                       "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                       "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity")


def is_standard_quota_resource(name: str) -> bool:
    return name in STANDARD_QUOTA_RESOURCES or name.startswith((HUGEPAGES_PREFIX, REQUESTS_PREFIX + HUGEPAGES_PREFIX))


def scope_valid_for_resource(scope: str, resource: str) -> bool:
    """IsResourceQuotaScopeValidForResource."""
    if scope == "BestEffort":
        return resource in POD_COUNT_RESOURCES
    if scope in STANDARD_SCOPES:
        return resource in POD_COUNT_RESOURCES or resource in POD_COMPUTE_RESOURCES
    return True


def validate_quota_resource_name(name: str, path: Path) -> ErrorList:
    """ValidateResourceQuotaResourceName."""
    errs = validate_resource_name(name, path)
    if "/" not in name and not is_standard_quota_resource(name):
        errs.append(field.invalid(path, name, "must be a standard resource for quota"))
    return errs


def validate_resource_list(raw: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for name, value in sorted((raw or {}).items()) if isinstance(raw, dict) else ():
        errs += validate_quota_resource_name(name, path.key(name))
        try:
            errs += validate_quantity_value(name, quantity.parse(value), path.key(name))
        except quantity.QuantityError:
            continue
    return errs


def _conflicts(scopes: set[str], path: Path, value: Any) -> ErrorList:
    return [field.invalid(path, value, "conflicting scopes") for pair in CONFLICTING_SCOPES
            if set(pair) <= scopes]


def _validate_scopes(spec: Object, path: Path) -> ErrorList:
    scopes = spec.get("scopes") or []
    if not scopes:
        return []
    errs: ErrorList = []
    hard = sorted(spec.get("hard") or {})
    scopes_path = path.child("scopes")
    for scope in scopes:
        if scope not in STANDARD_SCOPES:
            errs.append(field.invalid(scopes_path, scopes, "unsupported scope"))
        for name in hard:
            if is_standard_quota_resource(name) and not scope_valid_for_resource(scope, name):
                errs.append(field.invalid(scopes_path, scopes, "unsupported scope applied to resource"))
    return errs + _conflicts(set(scopes), scopes_path, scopes)


def _selector_value(selector: Object) -> OrderedStruct:
    """The internal ScopeSelector as Go prints it in an error (no JSON tags on internal types)."""
    expressions = [OrderedStruct((("ScopeName", e.get("scopeName", "")), ("Operator", e.get("operator", "")),
                                  ("Values", e.get("values")))) for e in selector.get("matchExpressions") or []]
    return OrderedStruct((("MatchExpressions", expressions or None),))


def _validate_operator(req: Object, path: Path) -> ErrorList:
    operator, values = req.get("operator") or "", req.get("values") or []
    errs: ErrorList = []
    if req.get("scopeName") in EXISTS_ONLY and operator != "Exists":
        errs.append(field.invalid(path.child("operator"), operator, EXISTS_ONLY_MESSAGE))
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(field.required(path.child("values"), "must be at least one value when `operator` is 'In' or "
                                                            "'NotIn' for scope selector"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(field.invalid(path.child("values"), values, "must be no value when `operator` is 'Exist' or "
                                                                    "'DoesNotExist' for scope selector"))
    else:
        errs.append(field.invalid(path.child("operator"), operator, "not a valid selector operator"))
    return errs


def _validate_scope_selector(spec: Object, path: Path) -> ErrorList:
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return []
    errs: ErrorList = []
    hard = sorted(spec.get("hard") or {})
    exprs_path = path.child("scopeSelector", "matchExpressions")
    scopes: set[str] = set()
    for req in selector.get("matchExpressions") or []:
        scope = req.get("scopeName") or ""
        if scope not in STANDARD_SCOPES:
            errs.append(field.invalid(exprs_path.child("scopeName"), scope, "unsupported scope"))
        for name in hard:
            if is_standard_quota_resource(name) and not scope_valid_for_resource(scope, name):
                errs.append(field.invalid(exprs_path, _selector_value(selector), "unsupported scope applied to "
                                                                                 "resource"))
        errs += _validate_operator(req, exprs_path)
        scopes.add(scope)
    return errs + _conflicts(scopes, exprs_path, spec.get("scopes"))


def validate_spec(spec: Object, path: Path) -> ErrorList:
    """ValidateResourceQuotaSpec."""
    errs = validate_resource_list(spec.get("hard"), path.child("hard"))
    return errs + _validate_scopes(spec, path) + _validate_scope_selector(spec, path)


def validate_status(status: Object, path: Path) -> ErrorList:
    """ValidateResourceQuotaStatus."""
    return validate_resource_list(status.get("hard"), path.child("hard")) + \
        validate_resource_list(status.get("used"), path.child("used"))


def validate_scopes_unchanged(obj: Object, old: Object) -> ErrorList:
    scopes = (obj.get("spec") or {}).get("scopes")
    if set(scopes or []) != set((old.get("spec") or {}).get("scopes") or []):
        return [field.invalid(Path("spec", "scopes"), scopes, "field is immutable")]
    return []
