"""ValidateStatefulSetSpec and its update and status rules (pkg/apis/apps/validation)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, OrderedStruct, Path
from ..core.podspec.annotations import validate_pod_annotations
from ..policy.poddisruptionbudget import selector_struct
from . import validation as v
from .workload import meta_update, status

Object = dict[str, Any]
POLICIES = ("OrderedReady", "Parallel")
RETENTION = ("Retain", "Delete")
# What an update may change; any other spec change is forbidden.
UPDATABLE = ("replicas", "template", "updateStrategy", "minReadySeconds", "ordinals",
             "persistentVolumeClaimRetentionPolicy")
FORBIDDEN_UPDATE = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
STATUS_COUNTS = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas")
GREATER = "cannot be greater than status.replicas"


def _policy(spec: Object, path: Path) -> ErrorList:
    policy = spec.get("podManagementPolicy", "")
    if not policy:
        return [field.required(path.child("podManagementPolicy"), "")]
    if policy not in POLICIES:
        return [field.invalid(path.child("podManagementPolicy"), policy, "must be 'OrderedReady' or 'Parallel'")]
    return []


def _rolling_struct(rolling: Object) -> OrderedStruct:
    return OrderedStruct((("Partition", v.number(rolling.get("partition"))),
                          ("MaxUnavailable", rolling.get("maxUnavailable"))))


def _rolling_update(rolling: Object, path: Path) -> ErrorList:
    """validateRollingUpdateStatefulSet."""
    errs = v.nonnegative(rolling, "partition", path)
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        unavailable_path = path.child("maxUnavailable")
        errs += v.validate_positive_int_or_percent(unavailable, unavailable_path)
        if v.int_or_percent_value(unavailable) == 0:
            errs.append(field.invalid(unavailable_path, unavailable, "cannot be 0"))
        errs += v.not_more_than_100_percent(unavailable, unavailable_path)
    return errs


def _update_strategy(spec: Object, path: Path) -> ErrorList:
    strategy = spec.get("updateStrategy") if isinstance(spec.get("updateStrategy"), dict) else {}
    kind, rolling, path = strategy.get("type", ""), strategy.get("rollingUpdate"), path.child("updateStrategy")
    if not kind:
        return [field.required(path, "")]
    if kind == "OnDelete":
        if isinstance(rolling, dict):
            return [field.invalid(path.child("rollingUpdate"), _rolling_struct(rolling),
                                  "only allowed for updateStrategy 'RollingUpdate'")]
        return []
    if kind == "RollingUpdate":
        return _rolling_update(rolling, path.child("rollingUpdate")) if isinstance(rolling, dict) else []
    value = OrderedStruct((("Type", kind), ("RollingUpdate", _rolling_struct(rolling)
                                                            if isinstance(rolling, dict) else None)))
    return [field.invalid(path, value, "must be 'RollingUpdate' or 'OnDelete'")]


def _retention(spec: Object, path: Path) -> ErrorList:
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(policy, dict):
        return []
    path = path.child("persistentVolumeClaimRetentionPolicy")
    return [field.not_supported(path.child(key), policy.get(key, ""), RETENTION)
            for key in ("whenDeleted", "whenScaled") if policy.get(key, "") not in RETENTION]


def _template(spec: Object, path: Path) -> ErrorList:
    """ValidatePodTemplateSpecForStatefulSet: the pod spec itself is not validated here."""
    selector = spec.get("selector")
    parsed = v.as_selector(selector)
    if parsed is None:
        return [field.invalid(path.child("selector"), selector_struct(selector), "")]
    template, path = v.template_of(spec), path.child("template")
    meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    errs = v.selector_matches_template(parsed, template, path)
    errs += validation.validate_labels(meta.get("labels"), path.child("labels"))
    errs += validation.validate_annotations(meta.get("annotations"), path.child("annotations"))
    return errs + validate_pod_annotations(meta.get("annotations"), pod_spec, path.child("annotations"))


def validate_spec(spec: Object, path: Path) -> ErrorList:
    """ValidateStatefulSetSpec."""
    errs = _policy(spec, path) + _update_strategy(spec, path) + _retention(spec, path)
    errs += v.nonnegative(spec, "replicas", path) + v.nonnegative(spec, "minReadySeconds", path)
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs += validation.validate_nonnegative_field(v.number(ordinals.get("start")), path.child("ordinals.start"))
    errs += v.validate_required_selector(spec.get("selector"), path.child("selector"), "statefulset")
    errs += _template(spec, path)
    return errs + v.validate_restart_policy(v.template_of(spec), path.child("template"), "StatefulSet")


def validate_update(obj: Object, old: Object) -> ErrorList:
    """ValidateStatefulSetUpdate."""
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    errs = meta_update(obj, old) + validate_spec(spec, Path("spec"))
    fixed = {k: val for k, val in spec.items() if k not in UPDATABLE}
    old_fixed = {k: val for k, val in old_spec.items() if k not in UPDATABLE}
    if fixed != old_fixed:
        errs.append(field.forbidden(Path("spec"), FORBIDDEN_UPDATE))
    return errs


def validate_status_update(obj: Object, old: Object) -> ErrorList:
    """ValidateStatefulSetStatusUpdate: the status first, then metadata."""
    path, new_status = Path("status"), status(obj)
    errs = v.validate_counts(new_status, STATUS_COUNTS, path)
    errs += v.optional_nonnegative(new_status, "observedGeneration", path)
    errs += v.optional_nonnegative(new_status, "collisionCount", path)
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        errs += v.not_greater(new_status, key, "replicas", path, GREATER)
    errs += v.not_greater(new_status, "availableReplicas", "readyReplicas", path,
                          "cannot be greater than status.readyReplicas")
    return errs + meta_update(obj, old) + v.collision_count_decremented(new_status, status(old))
