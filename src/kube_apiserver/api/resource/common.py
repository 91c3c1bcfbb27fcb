"""Checks every resource.k8s.io kind shares (pkg/apis/resource/validation, v1.34): names, lists, sets
and maps with their size limits, CEL selectors, opaque configuration, tolerations and taints."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import orjson

from ... import cel
from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path
from ..storage.common import blen, validate_csi_driver_name

Object = dict[str, Any]
Check = Callable[[Any, Path], ErrorList]
SELECTORS_MAX = 32
CONFIG_MAX = 32
REQUESTS_MAX = 32
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule")  # sets.List: sorted
CONFIG_SOURCES = ("FromClaim", "FromClass")
REQUEST_REF_MSG = ("must be the name of a request in the claim or the name of a request and a subrequest "
                   "separated by '/'")
# The driver name rules are a CSI driver's (validateDriverName reuses ValidateCSIDriverName).
validate_driver_name = validate_csi_driver_name


def as_dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def dns_label(value: str, path: Path) -> ErrorList:
    """corevalidation.ValidateDNS1123Label (device, request and counter names)."""
    return [field.invalid(path, value, msg) for msg in validation.is_dns1123_label(value)]


def dns_subdomain(value: str, path: Path) -> ErrorList:
    return [field.invalid(path, value, msg) for msg in validation.is_dns1123_subdomain(value)]


def label_value(value: str, path: Path) -> ErrorList:
    return [field.invalid(path, value, msg) for msg in validation.is_valid_label_value(value)]


def validate_device_class_name(name: str, path: Path) -> ErrorList:
    """validateDeviceClass: required, then a DNS subdomain."""
    return [field.required(path, "")] if not name else dns_subdomain(name, path)


# ---- lists, sets and maps: items first, then the size limit (a negative limit: none) ----

def validate_slice(items: list[Any], max_size: int, check: Check, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, item in enumerate(items):
        errs += check(item, path.index(i))
    if 0 <= max_size < len(items):
        # The items themselves would make the message too long; only their number is shown.
        errs.append(field.too_many(path, len(items), max_size))
    return errs


def validate_set(items: list[Any], max_size: int, check: Check, key: Callable[[Any], tuple[Hashable, str]],
                 path: Path) -> ErrorList:
    """validate_slice, and no two items with the same key (reported at the key's field)."""
    errs = validate_slice(items, max_size, check, path)
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        value, field_name = key(item)
        if value in seen:
            errs.append(field.duplicate(path.index(i).child(field_name) if field_name else path.index(i), value))
        seen.add(value)
    return errs


def string_key(item: Any) -> tuple[Hashable, str]:
    return str(item), ""


def name_key(item: Any) -> tuple[Hashable, str]:
    return as_dict(item).get("name") or "", "name"


def truncate_key(key: str, max_len: int) -> str:
    """truncateIfTooLong: long keys are shortened in the middle in error paths."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[:(remaining + 1) // 2] + "..." + key[len(key) - remaining // 2:]


def validate_map(items: Object, max_size: int, truncate_len: int, check_key: Check, check_item: Check,
                 path: Path) -> ErrorList:
    errs: ErrorList = []
    if 0 <= max_size < len(items):
        errs.append(field.too_many(path, len(items), max_size))
    for key, item in items.items():
        key_path = path.key(truncate_key(str(key), truncate_len))
        errs += check_key(key, key_path) + check_item(item, key_path)
    return errs


def no_check(value: Any, path: Path) -> ErrorList:
    return []


# ---- selectors and configuration ----

def validate_selectors(selectors: list[Any], path: Path) -> ErrorList:
    return validate_slice(selectors, SELECTORS_MAX, validate_selector, path)


def validate_selector(selector: Any, path: Path) -> ErrorList:
    cel_selector = as_dict(selector).get("cel")
    if cel_selector is None:
        return [field.required(path.child("cel"), "")]
    return validate_cel_selector(as_dict(cel_selector), path.child("cel"))


def validate_cel_selector(selector: Object, path: Path) -> ErrorList:
    expression = selector.get("expression") or ""
    expression_path = path.child("expression")
    if blen(expression) > CEL_EXPRESSION_MAX_LENGTH:
        return [field.too_long(expression_path, "", CEL_EXPRESSION_MAX_LENGTH)]  # not worth compiling
    try:
        cel.compile(expression)
    except cel.CompileError as err:
        return [field.invalid(expression_path, expression, str(err))]
    return []


def validate_device_configuration(config: Object, path: Path) -> ErrorList:
    opaque = config.get("opaque")
    if opaque is None:
        return [field.required(path.child("opaque"), "")]
    opaque_path = path.child("opaque")
    errs = validate_driver_name(as_dict(opaque).get("driver") or "", opaque_path.child("driver"))
    return errs + validate_raw_extension(as_dict(opaque).get("parameters"), opaque_path.child("parameters"),
                                         OPAQUE_PARAMETERS_MAX_LENGTH)


def validate_raw_extension(value: Any, path: Path, max_length: int) -> ErrorList:
    """validateRawExtension: a JSON object of bounded size (null or absent: required)."""
    if value is None:
        return [field.required(path, "")]
    if len(orjson.dumps(value)) > max_length:
        return [field.too_long(path, "", max_length)]
    if not isinstance(value, dict):
        return [field.invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def request_ref_errors(name: str, path: Path, request_names: dict[str, set[str] | None]) -> ErrorList:
    """validateRequestNameRef: "<request>" or "<request>/<subrequest>" of this claim."""
    segments = name.split("/")
    if len(segments) > 2:
        return [field.invalid(path, name, REQUEST_REF_MSG)]
    errs: ErrorList = []
    for segment in segments:
        errs += dns_label(segment, path)
    if not has_request(request_names, name):
        errs.append(field.invalid(path, name, REQUEST_REF_MSG))
    return errs


def has_request(request_names: dict[str, set[str] | None], ref: str) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in request_names:
        return False
    return len(segments) == 1 or segments[1] in (request_names[segments[0]] or set())


def gather_request_names(requests: list[Any]) -> dict[str, set[str] | None]:
    """Each request's name, with its subrequests' names when it has firstAvailable."""
    names: dict[str, set[str] | None] = {}
    for request in map(as_dict, requests):
        subrequests = as_list(request.get("firstAvailable"))
        names[request.get("name") or ""] = {as_dict(s).get("name") or "" for s in subrequests} or None
    return names


def validate_request_refs(refs: list[Any], path: Path, request_names: dict[str, set[str] | None]) -> ErrorList:
    return validate_set(refs, REQUESTS_MAX, lambda n, p: request_ref_errors(str(n), p, request_names),
                        string_key, path)


def validate_config_source(source: str, path: Path) -> ErrorList:
    if not source:
        return [field.required(path, "")]
    if source not in CONFIG_SOURCES:
        return [field.not_supported(path, source, CONFIG_SOURCES)]
    return []


# ---- tolerations and taints ----

def validate_toleration(toleration: Any, path: Path) -> ErrorList:
    toleration = as_dict(toleration)
    errs: ErrorList = []
    key, value = toleration.get("key") or "", toleration.get("value") or ""
    if key:
        errs += validation.validate_label_name(key, path.child("key"))
    operator = toleration.get("operator") or ""
    if operator == "Exists":
        if value:
            errs.append(field.invalid(path.child("value"), value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        errs += label_value(value, path.child("value"))
    elif not operator:
        errs.append(field.required(path.child("operator"), ""))
    else:
        errs.append(field.not_supported(path.child("operator"), operator, TOLERATION_OPERATORS))
    effect = toleration.get("effect") or ""
    if effect and effect not in TAINT_EFFECTS:  # optional in a toleration
        errs.append(field.not_supported(path.child("effect"), effect, TAINT_EFFECTS))
    return errs


def validate_tolerations(tolerations: list[Any], path: Path) -> ErrorList:
    """Each toleration; v1.34 sets no limit on their number here."""
    return [e for i, t in enumerate(tolerations) for e in validate_toleration(t, path.index(i))]


def validate_taint(taint: Any, path: Path) -> ErrorList:
    taint = as_dict(taint)
    errs = validation.validate_label_name(taint.get("key") or "", path.child("key"))  # also: not empty
    if taint.get("value"):
        errs += label_value(taint["value"], path.child("value"))
    effect = taint.get("effect") or ""
    if not effect:
        errs.append(field.required(path.child("effect"), ""))
    elif effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(path.child("effect"), effect, TAINT_EFFECTS))
    return errs


def validate_binding_conditions(owner: Object, path: Path) -> ErrorList:
    """validateDeviceBindingParameters: label-name conditions, at most 4 of each, distinct, both or neither."""
    conditions = as_list(owner.get("bindingConditions"))
    failures = as_list(owner.get("bindingFailureConditions"))
    cond_path, fail_path = path.child("bindingConditions"), path.child("bindingFailureConditions")
    errs = validate_slice(conditions, 4, lambda c, p: validation.validate_label_name(str(c), p), cond_path)
    errs += validate_slice(failures, 4, lambda c, p: validation.validate_label_name(str(c), p), fail_path)
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        if condition in seen:
            errs.append(field.duplicate(cond_path.index(i), condition))
        seen.add(condition)
    seen_failures: set[str] = set()
    for i, condition in enumerate(failures):
        if condition in seen_failures:
            errs.append(field.duplicate(fail_path.index(i), condition))
        seen_failures.add(condition)
        if condition in seen:
            errs.append(field.invalid(fail_path.index(i), condition,
                                      "bindingFailureConditions must not overlap with bindingConditions"))
    if not conditions and failures:
        errs.append(field.invalid(cond_path, owner.get("bindingConditions"), "bindingConditions are required to use bindingFailureConditions"))
    if not failures and conditions:
        errs.append(field.invalid(fail_path, owner.get("bindingFailureConditions"),
                                  "bindingFailureConditions are required to use bindingConditions"))
    return errs
