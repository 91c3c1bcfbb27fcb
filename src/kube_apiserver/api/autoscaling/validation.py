"""HorizontalPodAutoscaler validation (pkg/apis/autoscaling/validation), on the stored (v2) form: the
field paths are v2's whichever version the request used, as Kubernetes validates the internal type."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...apimachinery import field, quantity, validation
from ..core.podspec.volumes import validate_dns1123_label
from ..node.resources import validate_container_resource_name

Object = dict[str, Any]
Path = field.Path
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SOURCE_FIELDS = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                 "ContainerResource": "containerResource"}
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")
TARGET_TYPES = ("Utilization", "Value", "AverageValue")


@dataclass(frozen=True)
class RefOptions:
    """CrossVersionObjectReferenceValidationOptions."""

    allow_empty_api_group: bool = False
    allow_invalid_api_version: bool = False


@dataclass(frozen=True)
class Options:
    """HorizontalPodAutoscalerSpecValidationOptions (HPAScaleToZero is alpha, off, in v1.34)."""

    min_replicas_lower_bound: int = 1
    scale_target_ref: RefOptions = RefOptions()
    object_metrics: RefOptions = RefOptions(allow_empty_api_group=True)


def options_for(hpa: Object, old: Object | None) -> Options:
    """validationOptionsForHorizontalPodAutoscaler."""
    opts = Options()
    ref, old_spec = (hpa.get("spec") or {}).get("scaleTargetRef") or {}, (old or {}).get("spec") or {}
    if old is not None and old_spec.get("minReplicas") == 0:
        opts = replace(opts, min_replicas_lower_bound=0)
    old_ref = old_spec.get("scaleTargetRef") or {}
    if old is not None and old_ref.get("apiVersion") == ref.get("apiVersion") and old_ref.get("kind") == ref.get("kind"):
        opts = replace(opts, scale_target_ref=RefOptions(allow_invalid_api_version=True))
    elif ref.get("kind") == "ReplicationController":
        opts = replace(opts, scale_target_ref=RefOptions(allow_empty_api_group=True))
    for metric in old_spec.get("metrics") or []:
        if metric.get("type") == "Object" and isinstance(metric.get("object"), dict) and \
                api_version_error(metric["object"].get("describedObject") or {}, opts.object_metrics):
            opts = replace(opts, object_metrics=RefOptions(allow_empty_api_group=True, allow_invalid_api_version=True))
            break
    return opts


def validate_hpa(hpa: Object, opts: Options) -> field.ErrorList:
    """ValidateHorizontalPodAutoscaler."""
    errs = validation.validate_object_meta(hpa.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           Path("metadata"))
    return errs + validate_spec(hpa.get("spec") or {}, Path("spec"), opts)


def validate_hpa_update(hpa: Object, old: Object, opts: Options) -> field.ErrorList:
    """ValidateHorizontalPodAutoscalerUpdate."""
    errs = validation.validate_object_meta_update(hpa.get("metadata") or {}, old.get("metadata") or {},
                                                  Path("metadata"))
    return errs + validate_spec(hpa.get("spec") or {}, Path("spec"), opts)


def validate_status_update(hpa: Object, old: Object) -> field.ErrorList:
    """ValidateHorizontalPodAutoscalerStatusUpdate."""
    errs = validation.validate_object_meta_update(hpa.get("metadata") or {}, old.get("metadata") or {},
                                                  Path("metadata"))
    status = hpa.get("status") or {}
    for key in ("currentReplicas", "desiredReplicas"):
        errs += validation.validate_nonnegative_field(status.get(key) or 0, Path("status", key))
    return errs


def validate_spec(spec: Object, path: Path, opts: Options) -> field.ErrorList:
    errs: field.ErrorList = []
    minimum, maximum = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if minimum is not None and minimum < opts.min_replicas_lower_bound:
        errs.append(field.invalid(path.child("minReplicas"), minimum,
                                  f"must be greater than or equal to {opts.min_replicas_lower_bound}"))
    if maximum < 1:
        errs.append(field.invalid(path.child("maxReplicas"), maximum, "must be greater than 0"))
    if minimum is not None and maximum < minimum:
        errs.append(field.invalid(path.child("maxReplicas"), maximum, "must be greater than or equal to `minReplicas`"))
    errs += validate_reference(spec.get("scaleTargetRef") or {}, path.child("scaleTargetRef"), opts.scale_target_ref)
    errs += _metrics(spec.get("metrics") or [], path.child("metrics"), minimum, opts.object_metrics)
    return errs + _behavior(spec.get("behavior"), path.child("behavior"))


def api_version_error(ref: Object, opts: RefOptions) -> str | None:
    """ValidateAPIVersion: schema.ParseGroupVersion, and a group unless empty groups are allowed."""
    if opts.allow_invalid_api_version:
        return None
    api_version = ref.get("apiVersion") or ""
    if api_version.count("/") > 1:
        return f"unexpected GroupVersion string: {api_version}"
    group = api_version.split("/")[0] if "/" in api_version else ""
    if not group and not opts.allow_empty_api_group:
        return "apiVersion must specify API group"
    return None


def validate_reference(ref: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    """ValidateCrossVersionObjectReference."""
    errs: field.ErrorList = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            errs.append(field.required(path.child(key), ""))
        else:
            errs += [field.invalid(path.child(key), value, m) for m in validation.is_valid_path_segment_name(value)]
    why = api_version_error(ref, opts)
    if why:
        errs.append(field.invalid(path.child("apiVersion"), ref.get("apiVersion") or "", why))
    return errs


def _metrics(metrics: list[Any], path: Path, minimum: int | None, opts: RefOptions) -> field.ErrorList:
    errs: field.ErrorList = []
    for i, metric in enumerate(metrics):
        errs += _metric(metric if isinstance(metric, dict) else {}, path.index(i), opts)
    kinds = {m.get("type") for m in metrics if isinstance(m, dict)}
    if minimum == 0 and not kinds & {"Object", "External"}:
        errs.append(field.forbidden(path, "must specify at least one Object or External metric to support scaling "
                                          "to zero replicas"))
    return errs


def _metric(metric: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    """validateMetricSpec: the type, exactly the source it names, and that source."""
    kind = metric.get("type") or ""
    errs: field.ErrorList = []
    if not kind:
        errs.append(field.required(path.child("type"), "must specify a metric source type"))
    if kind not in SOURCE_TYPES:
        errs.append(field.not_supported(path.child("type"), kind, SOURCE_TYPES))
    present = [key for key in ("object", "external", "pods", "resource", "containerResource")
               if isinstance(metric.get(key), dict)]
    if present:
        errs += SOURCE_VALIDATORS[present[0]](metric[present[0]], path.child(present[0]), opts)
    expected = SOURCE_FIELDS.get(kind)
    if expected is not None and expected not in present:
        errs.append(field.required(path.child(expected), "must populate information for the given metric source"))
    if expected is None:
        errs.append(field.not_supported(path.child("type"), kind, SOURCE_TYPES))
    if len(present) != 1:
        errs += [field.forbidden(path.child(key), "must populate the given metric source only")
                 for key in sorted(present) if key != expected]
    return errs


def _target(target: Object, path: Path) -> field.ErrorList:
    """validateMetricTarget."""
    errs: field.ErrorList = []
    kind = target.get("type") or ""
    if not kind:
        errs.append(field.required(path.child("type"), "must specify a metric target type"))
    if kind not in TARGET_TYPES:
        errs.append(field.invalid(path.child("type"), kind, "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and _sign(target[key]) != 1:
            errs.append(field.invalid(path.child(key), target[key], "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(field.invalid(path.child("averageUtilization"), utilization, "must be greater than 0"))
    return errs


def _sign(value: Any) -> int:
    try:
        return quantity.parse(value).sign()
    except quantity.QuantityError:
        return 0


def _identifier(identifier: Object, path: Path) -> field.ErrorList:
    name = identifier.get("name") or ""
    if not name:
        return [field.required(path.child("name"), "must specify a metric name")]
    return [field.invalid(path.child("name"), name, m) for m in validation.is_valid_path_segment_name(name)]


def _object(src: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    target = src.get("target") or {}
    errs = validate_reference(src.get("describedObject") or {}, path.child("describedObject"), opts)
    errs += _identifier(src.get("metric") or {}, path.child("metric")) + _target(target, path.child("target"))
    if target.get("value") is None and target.get("averageValue") is None:
        errs.append(field.required(path.child("target", "averageValue"),
                                   "must set either a target value or averageValue"))
    return errs


def _external(src: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    target = src.get("target") or {}
    errs = _identifier(src.get("metric") or {}, path.child("metric")) + _target(target, path.child("target"))
    if target.get("value") is None and target.get("averageValue") is None:
        errs.append(field.required(path.child("target", "averageValue"),
                                   "must set either a target value for metric or a per-pod target"))
    if target.get("value") is not None and target.get("averageValue") is not None:
        errs.append(field.forbidden(path.child("target", "value"),
                                    "may not set both a target value for metric and a per-pod target"))
    return errs


def _pods(src: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    target = src.get("target") or {}
    errs = _identifier(src.get("metric") or {}, path.child("metric")) + _target(target, path.child("target"))
    if target.get("averageValue") is None:
        errs.append(field.required(path.child("target", "averageValue"), "must specify a positive target averageValue"))
    return errs


def _resource(src: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    errs: field.ErrorList = []
    if not src.get("name"):
        errs.append(field.required(path.child("name"), "must specify a resource name"))
    return errs + _utilization_or_value(src.get("target") or {}, path.child("target"))


def _container_resource(src: Object, path: Path, opts: RefOptions) -> field.ErrorList:
    errs: field.ErrorList = []
    name, container = src.get("name") or "", src.get("container") or ""
    if not name:
        errs.append(field.required(path.child("name"), "must specify a resource name"))
    else:
        errs += validate_container_resource_name(name, path.child("name"))
    if not container:
        errs.append(field.required(path.child("container"), "must specify a container"))
    else:
        errs += validate_dns1123_label(container, path.child("container"))
    return errs + _utilization_or_value(src.get("target") or {}, path.child("target"))


def _utilization_or_value(target: Object, path: Path) -> field.ErrorList:
    errs = _target(target, path)
    utilization, average = target.get("averageUtilization"), target.get("averageValue")
    if utilization is None and average is None:
        errs.append(field.required(path.child("averageUtilization"),
                                   "must set either a target raw value or a target utilization"))
    if utilization is not None and average is not None:
        errs.append(field.forbidden(path.child("averageValue"),
                                    "may not set both a target raw value and a target utilization"))
    return errs


SOURCE_VALIDATORS = {"object": _object, "external": _external, "pods": _pods, "resource": _resource,
                     "containerResource": _container_resource}


def _behavior(behavior: Any, path: Path) -> field.ErrorList:
    if not isinstance(behavior, dict):
        return []
    errs: field.ErrorList = []
    for key in ("scaleUp", "scaleDown"):
        if isinstance(behavior.get(key), dict):
            errs += _scaling_rules(behavior[key], path.child(key))
    return errs


def _scaling_rules(rules: Object, path: Path) -> field.ErrorList:
    errs: field.ErrorList = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(field.invalid(path.child("stabilizationWindowSeconds"), window,
                                  "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(field.invalid(path.child("stabilizationWindowSeconds"), window,
                                  f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(field.not_supported(path.child("selectPolicy"), select, SELECT_POLICIES))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(field.required(path.child("policies"), "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        errs += _scaling_policy(policy if isinstance(policy, dict) else {}, path.child("policies").index(i))
    tolerance = rules.get("tolerance")
    if tolerance is not None and _sign(tolerance) < 0:
        errs.append(field.invalid(path.child("tolerance"), tolerance, "must be greater than or equal to 0"))
    return errs


def _scaling_policy(policy: Object, path: Path) -> field.ErrorList:
    errs: field.ErrorList = []
    kind, value, period = policy.get("type") or "", policy.get("value") or 0, policy.get("periodSeconds") or 0
    if kind not in POLICY_TYPES:
        errs.append(field.not_supported(path.child("type"), kind, POLICY_TYPES))
    if value <= 0:
        errs.append(field.invalid(path.child("value"), value, "must be greater than zero"))
    if period <= 0:
        errs.append(field.invalid(path.child("periodSeconds"), period, "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        errs.append(field.invalid(path.child("periodSeconds"), period,
                                  f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs
