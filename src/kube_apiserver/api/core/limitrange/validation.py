"""LimitRange validation (pkg/apis/core/validation ValidateLimitRange)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ....apimachinery.quantity import Quantity
from ...node.resources import validate_container_resource_name, validate_resource_name
from ..podspec.resources import overcommit_allowed, parsed

Object = dict[str, Any]
LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
LISTS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
MAX_MILLI_VALUE = (2**63 - 1) // 1000  # resource.MaxMilliValue


def validate_type_name(value: str, path: Path) -> ErrorList:
    errs = [field.invalid(path, value, msg) for msg in validation.is_qualified_name(value)]
    if not errs and "/" not in value and value not in LIMIT_TYPES:
        errs.append(field.invalid(path, value, "must be a standard limit type or fully qualified"))
    return errs


def _resource_name(limit_type: str, name: str, path: Path) -> ErrorList:
    if limit_type in ("Pod", "Container"):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def _ratio_limit(ratio: Quantity, low: Quantity, high: Quantity) -> tuple[float, float]:
    """(maxLimitRequestRatio, max/min) as compared, at milli precision when nothing overflows."""
    ratio_value, low_value, high_value = float(ratio.scaled(0)), low.scaled(0), high.scaled(0)
    if ratio.scaled(0) < MAX_MILLI_VALUE and low_value < MAX_MILLI_VALUE and high_value < MAX_MILLI_VALUE:
        ratio_value = ratio.scaled(-3) / 1000
        low_value, high_value = low.scaled(-3), high.scaled(-3)
    limit = float(high_value) / float(low_value) if low_value else float("inf") if high_value else float("nan")
    return ratio_value, limit


def go_float(value: float) -> str:
    """%f."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.6f}"


def _key_errors(item: dict[str, dict[str, Quantity]], key: str, path: Path) -> ErrorList:
    """The consistency of one resource's min, max, default, defaultRequest and ratio."""
    low, high = item["min"].get(key), item["max"].get(key)
    default, request = item["default"].get(key), item["defaultRequest"].get(key)
    ratio = item["maxLimitRequestRatio"].get(key)
    errs: ErrorList = []
    if low and high and low.value > high.value:
        errs.append(field.invalid(path.child("min").key(key), str(low), f"min value {low} is greater than max value "
                                                                        f"{high}"))
    req_path = path.child("defaultRequest").key(key)
    if request and low and low.value > request.value:
        errs.append(field.invalid(req_path, str(request), f"min value {low} is greater than default request value "
                                                          f"{request}"))
    if request and high and request.value > high.value:
        errs.append(field.invalid(req_path, str(request), f"default request value {request} is greater than max "
                                                          f"value {high}"))
    if request and default and request.value > default.value:
        errs.append(field.invalid(req_path, str(request), f"default request value {request} is greater than default "
                                                          f"limit value {default}"))
    if default and low and low.value > default.value:
        errs.append(field.invalid(path.child("default").key(key), str(low), f"min value {low} is greater than "
                                                                            f"default value {default}"))
    if default and high and default.value > high.value:
        errs.append(field.invalid(path.child("default").key(key), str(high), f"default value {default} is greater "
                                                                             f"than max value {high}"))
    return errs + _ratio_errors(ratio, low, high, path.child("maxLimitRequestRatio").key(key)) + \
        _overcommit_errors(key, default, request, req_path)


def _ratio_errors(ratio: Quantity | None, low: Quantity | None, high: Quantity | None, path: Path) -> ErrorList:
    if ratio is None:
        return []
    errs: ErrorList = []
    if ratio.value < 1:
        errs.append(field.invalid(path, str(ratio), f"ratio {ratio} is less than 1"))
    if low is not None and high is not None:
        ratio_value, limit = _ratio_limit(ratio, low, high)
        if ratio_value > limit:
            errs.append(field.invalid(path, str(ratio), f"ratio {ratio} is greater than max/min = {go_float(limit)}"))
    return errs


def _overcommit_errors(key: str, default: Quantity | None, request: Quantity | None, path: Path) -> ErrorList:
    if overcommit_allowed(key) or default is None or request is None or default.value == request.value:
        return []
    return [field.invalid(path, str(request), f"default value {default} must equal to defaultRequest value "
                                              f"{request} in {key}")]


def _names(limit_type: str, item: dict[str, dict[str, Quantity]], keys: tuple[str, ...], path: Path) -> ErrorList:
    return [e for key in keys for name in sorted(item[key])
            for e in _resource_name(limit_type, name, path.child(key).key(name))]


def _validate_item(limit: Object, path: Path, seen: set[str]) -> ErrorList:
    limit_type = limit.get("type") or ""
    errs = validate_type_name(limit_type, path.child("type"))
    if limit_type in seen:
        errs.append(field.duplicate(path.child("type"), limit_type))
    seen.add(limit_type)
    pod = limit_type == "Pod"
    item = {key: parsed(limit.get(key)) if not (pod and key in ("default", "defaultRequest")) else {}
            for key in LISTS}
    errs += _names(limit_type, item, ("max", "min"), path)
    if pod:
        errs += [field.forbidden(path.child(key), "may not be specified when `type` is 'Pod'")
                 for key in ("default", "defaultRequest") if limit.get(key)]
    errs += _names(limit_type, item, ("default", "defaultRequest"), path)
    if limit_type == "PersistentVolumeClaim" and "storage" not in item["min"] and "storage" not in item["max"]:
        errs.append(field.required(path.child("limits"), "either minimum or maximum storage value is required, but "
                                                         "neither was provided"))
    errs += _names(limit_type, item, ("maxLimitRequestRatio",), path)
    for key in sorted({name for values in item.values() for name in values}):
        errs += _key_errors(item, key, path)
    return errs


def validate_limit_range(obj: Object) -> ErrorList:
    """ValidateLimitRange's spec checks (metadata is the strategy's)."""
    errs: ErrorList = []
    seen: set[str] = set()
    path = Path("spec", "limits")
    for i, limit in enumerate((obj.get("spec") or {}).get("limits") or []):
        errs += _validate_item(limit if isinstance(limit, dict) else {}, path.index(i), seen)
    return errs

