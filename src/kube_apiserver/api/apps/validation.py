"""Validation shared by the apps/v1 workloads (pkg/apis/apps/validation): selectors against pod
templates, int-or-percent fields, replica counts and the status checks every workload makes."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, labels, validation
from ...apimachinery.field import ErrorList, OrderedStruct, Path
from ..core.podspec import PodValidationOptions, validate_pod_template_spec
from ..policy.poddisruptionbudget import selector_struct

Object = dict[str, Any]
NO_MATCH = "`selector` does not match template `labels`"
OPTIONS = PodValidationOptions()


def number(value: Any) -> int:
    """A non-pointer Go integer: absent or null is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def nonnegative(obj: Object, key: str, path: Path) -> ErrorList:
    return validation.validate_nonnegative_field(number(obj.get(key)), path.child(key))


def optional_nonnegative(obj: Object, key: str, path: Path) -> ErrorList:
    """The same for a Go pointer: checked only when set."""
    return nonnegative(obj, key, path) if obj.get(key) is not None else []


def template_of(spec: Object) -> Object:
    template = spec.get("template")
    return template if isinstance(template, dict) else {}


def template_labels(template: Object) -> Any:
    meta = template.get("metadata")
    return meta.get("labels") if isinstance(meta, dict) else None


def as_selector(selector: Any) -> labels.Selector | None:
    """metav1.LabelSelectorAsSelector; None when it does not parse."""
    try:
        return labels.selector_from_label_selector(selector)
    except labels.SelectorParseError:
        return None


def validate_required_selector(selector: Any, path: Path, kind: str) -> ErrorList:
    """The selector a Deployment, ReplicaSet or StatefulSet must have, validated strictly."""
    if selector is None:
        return [field.required(path, "")]
    errs = validation.validate_label_selector(selector, path)
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errs.append(field.invalid(path, selector_struct(selector), f"empty selector is invalid for {kind}"))
    return errs


def selector_matches_template(selector: labels.Selector, template: Object, path: Path) -> ErrorList:
    found = template_labels(template)
    if not selector.empty() and not selector.matches(found or {}):
        return [field.invalid(path.child("metadata", "labels"), found, NO_MATCH)]
    return []


def validate_restart_policy(template: Object, path: Path, kind: str) -> ErrorList:
    """Workload pods always restart and never have a deadline."""
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    errs: ErrorList = []
    if spec.get("restartPolicy", "") != "Always":
        errs.append(field.not_supported(path.child("spec", "restartPolicy"), spec.get("restartPolicy", ""),
                                        ["Always"]))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(field.forbidden(path.child("spec", "activeDeadlineSeconds"),
                                    f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def validate_replica_set_template(template: Object, selector: labels.Selector, path: Path) -> ErrorList:
    """ValidatePodTemplateSpecForReplicaSet (Deployments use it too)."""
    errs = selector_matches_template(selector, template, path)
    errs += validate_pod_template_spec(template, path, OPTIONS)
    return errs + validate_restart_policy(template, path, "ReplicaSet")


def validate_selected_template(spec: Object, path: Path, kind: str) -> ErrorList:
    """Selector, then the template it selects (ValidateDeploymentSpec / ValidateReplicaSetSpec)."""
    selector = spec.get("selector")
    errs = validate_required_selector(selector, path.child("selector"), kind)
    parsed = as_selector(selector)
    if parsed is None:
        return errs + [field.invalid(path.child("selector"), selector_struct(selector), "invalid label selector")]
    return errs + validate_replica_set_template(template_of(spec), parsed, path.child("template"))


def validate_immutable_selector(obj: Object, old: Object) -> ErrorList:
    new_selector, old_selector = (obj.get("spec") or {}).get("selector"), (old.get("spec") or {}).get("selector")
    if new_selector == old_selector:
        return []
    return [field.invalid(Path("spec", "selector"), selector_struct(new_selector),
                          validation.FIELD_IMMUTABLE_ERROR_MSG)]


# ---- int or percent (ValidatePositiveIntOrPercent, IsNotMoreThan100Percent, getIntOrPercentValue) ----

def percent_value(value: Any) -> int | None:
    if isinstance(value, str) and not validation.is_valid_percent(value):
        return int(value[:-1])
    return None


def int_or_percent_value(value: Any) -> int:
    percent = percent_value(value)
    if percent is not None:
        return percent
    if isinstance(value, str):
        return int(value) if value.lstrip("+-").isdigit() else 0
    return number(value)


def validate_positive_int_or_percent(value: Any, path: Path) -> ErrorList:
    if isinstance(value, str):
        return [field.invalid(path, value, msg) for msg in validation.is_valid_percent(value)]
    return validation.validate_nonnegative_field(number(value), path)


def not_more_than_100_percent(value: Any, path: Path) -> ErrorList:
    percent = percent_value(value)
    if percent is None or percent <= 100:
        return []
    return [field.invalid(path, value, "must not be greater than 100%")]


def strategy_struct(strategy: Object, rolling_fields: tuple[tuple[str, str], ...]) -> OrderedStruct:
    """An internal update strategy as a bad value: Go field names, the rolling update a pointer."""
    rolling = strategy.get("rollingUpdate")
    rolling_struct = OrderedStruct(tuple((go, rolling.get(key, 0)) for go, key in rolling_fields)) \
        if isinstance(rolling, dict) else None
    return OrderedStruct((("Type", strategy.get("type", "")), ("RollingUpdate", rolling_struct)))


# ---- status ----

def validate_counts(status: Object, keys: tuple[str, ...], path: Path) -> ErrorList:
    errs: ErrorList = []
    for key in keys:
        errs += nonnegative(status, key, path)
    return errs


def not_greater(status: Object, key: str, than: str, path: Path, message: str) -> ErrorList:
    if number(status.get(key)) > number(status.get(than)):
        return [field.invalid(path.child(key), number(status.get(key)), message)]
    return []


def collision_count_decremented(status: Object, old_status: Object) -> ErrorList:
    """apivalidation.IsDecremented on status.collisionCount."""
    new, old = status.get("collisionCount"), old_status.get("collisionCount")
    if (new is None and old is not None) or (new is not None and old is not None and new < old):
        return [field.invalid(Path("status", "collisionCount"), number(new), "cannot be decremented")]
    return []
