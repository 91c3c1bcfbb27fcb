"""Resource requirements of containers and pods (validateResourceRequirements and helpers)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, quantity
from ....apimachinery.field import ErrorList, Path
from ...node.resources import (
    huge_page_error,
    is_huge_page,
    is_native,
    validate_container_resource_name,
    validate_quantity_value,
    validate_resource_name,
)
from .options import PodValidationOptions

Object = dict[str, Any]
POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")
QOS_COMPUTE = ("cpu", "memory")


def overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources except hugepages."""
    return is_native(name) and not is_huge_page(name)


def parsed(resources: Any) -> dict[str, quantity.Quantity]:
    """The well-formed quantities of a ResourceList (malformed ones were refused while defaulting)."""
    out: dict[str, quantity.Quantity] = {}
    for name, raw in (resources or {}).items() if isinstance(resources, dict) else ():
        try:
            out[str(name)] = quantity.parse(raw)
        except quantity.QuantityError:
            continue
    return out


def _pod_resource_name(name: str, path: Path) -> ErrorList:
    errs = validate_resource_name(name, path)
    if not errs and name not in ("cpu", "memory") and not is_huge_page(name):
        errs.append(field.not_supported(path, name, POD_LEVEL_RESOURCES))
    return errs


def _one_list(values: dict[str, quantity.Quantity], path: Path, pod_level: bool,
              opts: PodValidationOptions) -> tuple[ErrorList, bool, bool]:
    errs: ErrorList = []
    compute = huge = False
    for name in sorted(values):
        value, key_path = values[name], path.key(name)
        errs += _pod_resource_name(name, key_path) if pod_level else validate_container_resource_name(name, key_path)
        errs += validate_quantity_value(name, value, key_path)
        if is_huge_page(name):
            huge = True
            why = None if opts.allow_indivisible_huge_pages_values else huge_page_error(name, value)
            if why is not None:
                errs.append(field.invalid(key_path, str(value), why))
        compute = compute or name in QOS_COMPUTE
    return errs, compute, huge


def _requests_within_limits(requests: dict[str, quantity.Quantity], limits: dict[str, quantity.Quantity],
                            path: Path) -> ErrorList:
    errs: ErrorList = []
    for name in sorted(requests):
        value, limit = requests[name], limits.get(name)
        if limit is not None:
            if value.value != limit.value and not overcommit_allowed(name):
                errs.append(field.invalid(path.child("requests"), str(value), f"must be equal to {name} limit of "
                                                                             f"{limit}"))
            elif value.value > limit.value:
                errs.append(field.invalid(path.child("requests"), str(value), f"must be less than or equal to {name} "
                                                                             f"limit of {limit}"))
        elif not overcommit_allowed(name):
            errs.append(field.required(path.child("limits"), "Limit must be set for non overcommitable resources"))
    return errs


def _claims(claims: Any, claim_names: set[str], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, claim in enumerate(claims if isinstance(claims, list) else []):
        name, request = claim.get("name") or "", claim.get("request") or ""
        if not name:
            errs.append(field.required(path.index(i), ""))
            continue
        key = f"{name}/{request}" if request else name
        if name in seen or key in seen:
            errs.append(field.duplicate(path.index(i), key if name not in seen else name))
        seen.add(key)
        if name not in claim_names:
            listed = ": " + ", ".join(sorted(claim_names)) if claim_names else " which is empty"
            err = field.not_found(path.index(i), name)
            err.detail = "must be one of the names in pod.spec.resourceClaims" + listed
            errs.append(err)
    return errs


def validate_resource_requirements(requirements: Any, claim_names: set[str], path: Path,
                                   opts: PodValidationOptions, pod_level: bool = False) -> ErrorList:
    """validateResourceRequirements for a container (or, with pod_level, the pod's spec.resources)."""
    requirements = requirements if isinstance(requirements, dict) else {}
    limits, requests = parsed(requirements.get("limits")), parsed(requirements.get("requests"))
    errs, lim_compute, lim_huge = _one_list(limits, path.child("limits"), pod_level, opts)
    req_errs, req_compute, req_huge = _one_list(requests, path.child("requests"), pod_level, opts)
    errs += req_errs + _requests_within_limits(requests, limits, path)
    if (lim_huge or req_huge) and not (lim_compute or req_compute):
        errs.append(field.forbidden(path, "HugePages require cpu or memory"))
    return errs + _claims(requirements.get("claims"), claim_names, path.child("claims"))
