"""ResourceClaim and ResourceClaimTemplate specs as pkg/apis/resource/validation (v1.34) checks them:
requests (exactly or firstAvailable), allocation modes, constraints and configuration."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path
from . import features, gostruct
from .common import (
    CONFIG_MAX,
    REQUESTS_MAX,
    as_dict,
    as_list,
    dns_label,
    gather_request_names,
    name_key,
    validate_device_class_name,
    validate_device_configuration,
    validate_driver_name,
    validate_request_refs,
    validate_selectors,
    validate_set,
    validate_slice,
    validate_tolerations,
)

Object = dict[str, Any]
FIRST_AVAILABLE_MAX = 8
CONSTRAINTS_MAX = 32
ALLOCATION_MODES = ("All", "ExactCount")
ONE_REQUEST_TYPE = "exactly one of `exactly` or `firstAvailable` is required"
# Template metadata may carry only labels and annotations (validateFieldAllowList over ObjectMeta's
# Go fields, named with a lower-case first letter: "UID" becomes "uID").
TEMPLATE_META_FIELDS = (("name", "name"), ("generateName", "generateName"), ("namespace", "namespace"),
                        ("selfLink", "selfLink"), ("uid", "uID"), ("resourceVersion", "resourceVersion"),
                        ("generation", "generation"), ("creationTimestamp", "creationTimestamp"),
                        ("deletionTimestamp", "deletionTimestamp"),
                        ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
                        ("ownerReferences", "ownerReferences"), ("finalizers", "finalizers"),
                        ("managedFields", "managedFields"))


def validate_claim_spec(spec: Object, path: Path) -> ErrorList:
    return validate_device_claim(as_dict(spec.get("devices")), path.child("devices"))


def validate_device_claim(claim: Object, path: Path) -> ErrorList:
    requests = as_list(claim.get("requests"))
    names = gather_request_names(requests)
    errs = validate_set(requests, REQUESTS_MAX, validate_request, name_key, path.child("requests"))
    errs += validate_slice(as_list(claim.get("constraints")), CONSTRAINTS_MAX,
                           lambda c, p: validate_constraint(as_dict(c), p, names), path.child("constraints"))
    errs += validate_slice(as_list(claim.get("config")), CONFIG_MAX,
                           lambda c, p: validate_claim_config(as_dict(c), p, names), path.child("config"))
    return errs


def validate_request(request: Any, path: Path) -> ErrorList:
    request = as_dict(request)
    errs = dns_label(request.get("name") or "", path.child("name"))
    kinds = 0
    first_available = as_list(request.get("firstAvailable"))
    if first_available:
        kinds += 1
        errs += validate_set(first_available, FIRST_AVAILABLE_MAX, validate_subrequest, name_key,
                             path.child("firstAvailable"))
    if request.get("exactly") is not None:
        kinds += 1
        errs += validate_exact_request(as_dict(request["exactly"]), path.child("exactly"))
    if kinds == 0:
        errs.append(field.required(path, ONE_REQUEST_TYPE))
    elif kinds > 1:
        errs.append(field.invalid(path, None, ONE_REQUEST_TYPE + ", but multiple fields are set"))
    return errs


def validate_subrequest(subrequest: Any, path: Path) -> ErrorList:
    subrequest = as_dict(subrequest)
    errs = dns_label(subrequest.get("name") or "", path.child("name"))
    return errs + _request_body(subrequest, path)


def validate_exact_request(request: Object, path: Path) -> ErrorList:
    return _request_body(request, path)


def _request_body(request: Object, path: Path) -> ErrorList:
    """What an exact request and a subrequest share: class, selectors, mode and count, tolerations."""
    errs = validate_device_class_name(request.get("deviceClassName") or "", path.child("deviceClassName"))
    errs += validate_selectors(as_list(request.get("selectors")), path.child("selectors"))
    errs += validate_allocation_mode(request.get("allocationMode") or "", request.get("count") or 0,
                                     path.child("allocationMode"), path.child("count"))
    return errs + validate_tolerations(as_list(request.get("tolerations")), path.child("tolerations"))


def validate_allocation_mode(mode: str, count: int, mode_path: Path, count_path: Path) -> ErrorList:
    if mode == "All":
        if count != 0:
            return [field.invalid(count_path, count, "must not be specified when allocationMode is 'All'")]
    elif mode == "ExactCount":
        if count <= 0:
            return [field.invalid(count_path, count, "must be greater than zero")]
    else:
        return [field.not_supported(mode_path, mode, ALLOCATION_MODES)]
    return []


def validate_constraint(constraint: Object, path: Path, names: dict[str, set[str] | None]) -> ErrorList:
    errs = validate_request_refs(as_list(constraint.get("requests")), path.child("requests"), names)
    if constraint.get("matchAttribute") is not None:
        errs += validate_fully_qualified_name(constraint["matchAttribute"], path.child("matchAttribute"))
    elif constraint.get("distinctAttribute") is not None:
        errs += validate_fully_qualified_name(constraint["distinctAttribute"], path.child("distinctAttribute"))
    elif features.enabled(features.CONSUMABLE_CAPACITY):
        errs.append(field.required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, '
                                         'but multiple fields are set'))
    else:
        errs.append(field.required(path.child("matchAttribute"), ""))
    return errs


def validate_claim_config(config: Object, path: Path, names: dict[str, set[str] | None]) -> ErrorList:
    errs = validate_request_refs(as_list(config.get("requests")), path.child("requests"), names)
    return errs + validate_device_configuration(config, path)


# ---- attribute names (also used by ResourceSlices) ----

def validate_c_identifier(value: str, path: Path) -> ErrorList:
    errs: ErrorList = []
    if len(value) > 32:
        errs.append(field.too_long(path, "", 32))
    return errs + [field.invalid(path, value, msg) for msg in validation.is_c_identifier(value)]


def validate_qualified_name(name: Any, path: Path) -> ErrorList:
    """An attribute or capacity name: a C identifier, optionally prefixed by a driver-style domain."""
    name = str(name)
    if not name:
        return [field.required(path, "name required")]
    parts = name.split("/")
    if len(parts) == 1:
        return validate_c_identifier(parts[0], path)
    if len(parts) != 2:
        return []  # v1.34 checks only one or two parts
    domain, ident = parts
    errs = [field.required(path, "the domain must not be empty")] if not domain else \
        validate_driver_name(domain, path)
    if not ident:
        return errs + [field.required(path, "the name must not be empty")]
    return errs + validate_c_identifier(ident, path)


def validate_fully_qualified_name(name: Any, path: Path) -> ErrorList:
    errs = validate_qualified_name(name, path)
    if name and "/" not in str(name):
        errs.append(field.invalid(path, name, "must include a domain"))
    return errs


# ---- the kinds ----

def validate_claim(claim: Object) -> ErrorList:
    return validate_claim_spec(as_dict(claim.get("spec")), Path("spec"))


def validate_claim_update(claim: Object, old: Object) -> ErrorList:
    """The spec is immutable; it is checked again as stored expressions."""
    return immutable_spec(claim, old, "ResourceClaimSpec") + validate_claim(claim)


def immutable_spec(obj: Object, old: Object, type_name: str) -> ErrorList:
    spec, old_spec = obj.get("spec"), old.get("spec")
    if gostruct.semantic_equal(type_name, spec, old_spec):
        return []
    rendered = gostruct.render(type_name, spec)
    return [field.invalid(Path("spec"), rendered, validation.FIELD_IMMUTABLE_ERROR_MSG)]


def validate_template(template: Object) -> ErrorList:
    spec = as_dict(template.get("spec"))
    path = Path("spec")
    errs = validate_template_meta(as_dict(spec.get("metadata")), path.child("metadata"))
    return errs + validate_claim_spec(as_dict(spec.get("spec")), path.child("spec"))


def validate_template_update(template: Object, old: Object) -> ErrorList:
    return immutable_spec(template, old, "ResourceClaimTemplateSpec") + validate_template(template)


def validate_template_meta(meta: Object, path: Path) -> ErrorList:
    """ValidateTemplateObjectMeta: annotations and labels; any other field is forbidden."""
    errs = validation.validate_annotations(meta.get("annotations"), path.child("annotations"))
    errs += validation.validate_labels(meta.get("labels"), path.child("labels"))
    for key, go_name in TEMPLATE_META_FIELDS:
        if meta.get(key):
            errs.append(field.forbidden(path.child(go_name), "cannot be set for a template"))
    return errs
