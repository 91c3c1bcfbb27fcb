"""Device capacities and their request policies (consumable capacity, pkg/apis/resource/validation
v1.34): a policy is allowed only on devices that may be allocated more than once, and its default,
valid values or range must fit the capacity."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, quantity
from ...apimachinery.field import ErrorList, Path
from .common import as_dict, as_list, validate_set

Object = dict[str, Any]
DISCRETE_OPTIONS_MAX = 10
Q = quantity.Quantity


def _q(value: Any) -> Q:
    """Quantities were parsed (and canonicalized) when the object was decoded."""
    return quantity.parse(value if value is not None else "0")


def validate_capacity(capacity: Object, path: Path, multiple_allocations: bool) -> ErrorList:
    policy = capacity.get("requestPolicy")
    if policy is None:
        return []
    if not multiple_allocations:
        return [field.forbidden(path.child("requestPolicy"), "allowMultipleAllocations must be true")]
    return validate_request_policy(_q(capacity.get("value")), as_dict(policy), path.child("requestPolicy"))


def validate_request_policy(maximum: Q, policy: Object, path: Path) -> ErrorList:
    values, value_range = as_list(policy.get("validValues")), policy.get("validRange")
    if values and value_range is not None:
        return [field.forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and '
                                      '"validRange" at the same time')]
    default = policy.get("default")
    if values:
        if default is None:
            return [field.required(path.child("default"), "required when validValues is defined")]
        return validate_valid_values(_q(default), maximum, [_q(v) for v in values], path.child("validValues"))
    if value_range is not None:
        if default is None:
            return [field.required(path.child("default"), "required when validRange is defined")]
        return validate_range(_q(default), maximum, as_dict(value_range), path.child("validRange"))
    return []


def validate_valid_values(default: Q, maximum: Q, values: list[Q], path: Path) -> ErrorList:
    errs = [field.invalid(path.index(i + 1), str(values[i + 1]), "values must be sorted in ascending order")
            for i in range(len(values) - 1) if values[i].value > values[i + 1].value]

    def check(option: Q, option_path: Path) -> ErrorList:
        if option.value > maximum.value:
            return [field.invalid(option_path, str(option), f"option is larger than capacity value: {maximum}")]
        return []

    errs += validate_set(values, DISCRETE_OPTIONS_MAX, check, lambda q: (str(q.scaled(0)), ""), path)
    if all(v.value != default.value for v in values):
        errs.append(field.invalid(path, str(default), "default value is not valid according to the requestPolicy"))
    return errs


def validate_range(default: Q, capacity: Q, value_range: Object, path: Path) -> ErrorList:
    if value_range.get("min") is None:
        return [field.required(path.child("min"), "required when validRange is defined")]
    low = _q(value_range["min"])
    errs: ErrorList = []
    if low.value > capacity.value:
        errs.append(field.invalid(path.child("min"), str(low), f"min is larger than capacity value: {capacity}"))
    if default.value < low.value:
        errs.append(field.invalid(path.child("min"), str(default), f"default is less than min: {low}"))
    high = _q(value_range["max"]) if value_range.get("max") is not None else None
    if high is not None:
        errs += _max_errors(default, capacity, low, high, path.child("max"))
    if value_range.get("step") is not None:
        errs += _step_errors(default, capacity, low, high, _q(value_range["step"]), path.child("step"))
    return errs


def _max_errors(default: Q, capacity: Q, low: Q, high: Q, path: Path) -> ErrorList:
    errs: ErrorList = []
    if low.value > high.value:
        errs.append(field.invalid(path, str(low), f"min is larger than max: {high}"))
    if high.value > capacity.value:
        errs.append(field.invalid(path, str(high), f"max is larger than capacity value: {capacity}"))
    if default.value > high.value:
        errs.append(field.invalid(path, str(default), f"default is more than max: {high}"))
    return errs


def _step_errors(default: Q, capacity: Q, low: Q, high: Q | None, step: Q, path: Path) -> ErrorList:
    errs: ErrorList = []
    one_step = quantity.add(low, step)
    if one_step.value > capacity.value:
        errs.append(field.invalid(path, str(step), f"one step {one_step} is larger than capacity value: {capacity}"))
    for value in (default, high):
        if value is not None and step.scaled(0) and (value.scaled(0) - low.scaled(0)) % step.scaled(0):
            errs.append(field.invalid(path, str(value),
                                      f"value is not a multiple of a given step ({step}) from ({low})"))
    return errs
