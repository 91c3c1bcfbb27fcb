"""ResourceSlice validation (pkg/apis/resource/validation, v1.34): driver and pool, where the devices
are available, devices with attributes, capacities, counters and taints, shared counter sets."""

from __future__ import annotations

import re
from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path
from . import gostruct
from .capacity import validate_capacity
from .claim_status import validate_node_selector, validate_pool_name
from .claim_validation import validate_qualified_name
from .common import (
    as_dict,
    as_list,
    dns_label,
    name_key,
    no_check,
    validate_binding_conditions,
    validate_driver_name,
    validate_map,
    validate_set,
    validate_slice,
    validate_taint,
)

Object = dict[str, Any]
DEVICES_MAX = 128
TAINTS_MAX = 4
ATTRIBUTES_AND_CAPACITIES_MAX = 32
COUNTERS_PER_DEVICE_MAX = 32
DEVICE_COUNTERS_PER_SLICE_MAX = 1024
SHARED_COUNTERS_MAX = 32
ATTRIBUTE_VALUE_MAX_LENGTH = 64
ATTRIBUTE_KEY_MAX_LENGTH = 63 + 1 + 32  # domain/ID
DNS_LABEL_MAX_LENGTH = 63
NODE_SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
DEVICE_NODE_SELECTION = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                         "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
_NUMERIC = r"(0|[1-9]\d*)"
_PRERELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
SEMVER = re.compile(rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRERELEASE}(\.{_PRERELEASE})*)?"
                    rf"(\+{_BUILD}(\.{_BUILD})*)?", re.ASCII)


def validate_node_name(name: str, path: Path) -> ErrorList:
    return [field.invalid(path, name, msg) for msg in validation.name_is_dns_subdomain(name, False)]


def validate_slice_spec(spec: Object, old_spec: Object | None, path: Path) -> ErrorList:
    pool = as_dict(spec.get("pool"))
    errs = validate_driver_name(spec.get("driver") or "", path.child("driver"))
    errs += validate_pool(pool, path.child("pool"))
    if old_spec is not None:
        errs += _immutable_fields(spec, old_spec, path)
    errs += _node_selection(spec, path)
    shared = {as_dict(s).get("name") or "": set(as_dict(as_dict(s).get("counters"))) for s in
              as_list(spec.get("sharedCounters"))}
    devices = as_list(spec.get("devices"))
    per_device = spec.get("perDeviceNodeSelection") is True
    errs += validate_set(devices, DEVICES_MAX, lambda d, p: validate_device(as_dict(d), p, shared, per_device),
                         name_key, path.child("devices"))
    consumed = sum(len(as_dict(c).get("counters") or {}) for d in devices
                   for c in as_list(as_dict(d).get("consumesCounters")))
    if consumed > DEVICE_COUNTERS_PER_SLICE_MAX:
        errs.append(field.invalid(path.child("devices"), consumed, f"the total number of counters in devices must "
                                                                   f"not exceed {DEVICE_COUNTERS_PER_SLICE_MAX}"))
    sets = as_list(spec.get("sharedCounters"))
    counters = sum(len(as_dict(as_dict(s).get("counters"))) for s in sets)
    if counters > SHARED_COUNTERS_MAX:
        errs.append(field.invalid(path.child("sharedCounters"), counters,
                                  f"the total number of shared counters must not exceed {SHARED_COUNTERS_MAX}"))
    return errs + validate_set(sets, -1, validate_counter_set, name_key, path.child("sharedCounters"))


def _immutable_fields(spec: Object, old_spec: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    pairs = (((spec.get("pool") or {}).get("name") or "", (old_spec.get("pool") or {}).get("name") or "",
              path.child("pool", "name")),
             (spec.get("driver") or "", old_spec.get("driver") or "", path.child("driver")),
             (spec.get("nodeName"), old_spec.get("nodeName"), path.child("nodeName")))
    for new, old, field_path in pairs:
        errs += validation.validate_immutable_field(new, old, field_path)
    return errs


def _node_selection(spec: Object, path: Path) -> ErrorList:
    """Exactly one way of saying which nodes reach the pool."""
    errs: ErrorList = []
    chosen: list[str] = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            chosen.append("`nodeName`")
            errs += validate_node_name(spec["nodeName"], path.child("nodeName"))
        else:
            errs.append(field.invalid(path.child("nodeName"), "", "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        selector, selector_path = as_dict(spec["nodeSelector"]), path.child("nodeSelector")
        errs += validate_node_selector(selector, selector_path)
        terms = selector.get("nodeSelectorTerms")
        if len(as_list(terms)) != 1:
            # One term per slice keeps merging the selectors of several slices simple.
            errs.append(field.invalid(selector_path.child("nodeSelectorTerms"),
                                      gostruct.render("NodeSelectorTerm[]", terms),
                                      "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is True:
            chosen.append(f"`{key}`")
        elif spec.get(key) is not None:
            errs.append(field.invalid(path.child(key), spec[key], "must be either unset or set to true"))
    if not chosen:
        errs.append(field.required(path, NODE_SELECTION))
    elif len(chosen) > 1:
        errs.append(field.invalid(path, "{" + ", ".join(chosen) + "}", NODE_SELECTION +
                                  ", but multiple fields are set"))
    return errs


def validate_pool(pool: Object, path: Path) -> ErrorList:
    errs = validate_pool_name(pool.get("name") or "", path.child("name"))
    count, generation = pool.get("resourceSliceCount") or 0, pool.get("generation") or 0
    if count <= 0:
        errs.append(field.invalid(path.child("resourceSliceCount"), count, "must be greater than zero"))
    if generation < 0:
        errs.append(field.invalid(path.child("generation"), generation, "must be greater than or equal to zero"))
    return errs


def validate_counter_set(counter_set: Any, path: Path) -> ErrorList:
    counter_set = as_dict(counter_set)
    name, counters = counter_set.get("name") or "", as_dict(counter_set.get("counters"))
    errs = [field.required(path.child("name"), "")] if not name else dns_label(name, path.child("name"))
    if not counters:
        return errs + [field.required(path.child("counters"), "")]
    # The limit on their number applies to all sets together (checked by the caller).
    return errs + validate_map(counters, -1, DNS_LABEL_MAX_LENGTH, lambda k, p: dns_label(str(k), p), no_check,
                               path.child("counters"))


def validate_counter_consumption(consumption: Any, path: Path) -> ErrorList:
    consumption = as_dict(consumption)
    errs: ErrorList = []
    if not consumption.get("counterSet"):
        errs.append(field.required(path.child("counterSet"), ""))
    counters = as_dict(consumption.get("counters"))
    if not counters:
        return errs + [field.required(path.child("counters"), "")]
    return errs + validate_map(counters, -1, DNS_LABEL_MAX_LENGTH, lambda k, p: dns_label(str(k), p), no_check,
                               path.child("counters"))


def validate_device(device: Object, path: Path, shared: dict[str, set[str]], per_device: bool) -> ErrorList:
    errs = dns_label(device.get("name") or "", path.child("name"))
    attributes, capacity = as_dict(device.get("attributes")), as_dict(device.get("capacity"))
    if len(attributes) + len(capacity) > ATTRIBUTES_AND_CAPACITIES_MAX:
        # Reported once: if any one map is too large, so is their sum.
        errs.append(field.invalid(path, len(attributes) + len(capacity), f"the total number of attributes and "
                                  f"capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}"))
    errs += validate_map(attributes, -1, ATTRIBUTE_KEY_MAX_LENGTH, validate_qualified_name, validate_attribute,
                         path.child("attributes"))
    multiple = device.get("allowMultipleAllocations") is True
    errs += validate_map(capacity, -1, ATTRIBUTE_KEY_MAX_LENGTH, validate_qualified_name,
                         lambda c, p: validate_capacity(as_dict(c), p, multiple), path.child("capacity"))
    errs += validate_slice(as_list(device.get("taints")), TAINTS_MAX, validate_taint, path.child("taints"))
    errs += _counter_consumption(device, path, shared)
    errs += _device_node_selection(device, path, per_device)
    return errs + validate_binding_conditions(device, path)


def _counter_consumption(device: Object, path: Path, shared: dict[str, set[str]]) -> ErrorList:
    consumes = as_list(device.get("consumesCounters"))
    consumes_path = path.child("consumesCounters")
    errs = validate_set(consumes, -1, validate_counter_consumption,
                        lambda c: (as_dict(c).get("counterSet") or "", "counterSet"), consumes_path)
    total = sum(len(as_dict(as_dict(c).get("counters"))) for c in consumes)
    if total > COUNTERS_PER_DEVICE_MAX:
        errs.append(field.invalid(path, total, f"the total number of counters must not exceed "
                                               f"{COUNTERS_PER_DEVICE_MAX}"))
    for i, consumption in enumerate(map(as_dict, consumes)):
        counter_set = consumption.get("counterSet") or ""
        if counter_set not in shared:
            errs.append(field.invalid(consumes_path.index(i).child("counterSet"), counter_set,
                                      "must reference a counterSet defined in the ResourceSlice sharedCounters"))
            continue
        errs += [field.invalid(consumes_path.index(i).child("counters"), name,
                               "must reference a counter defined in the ResourceSlice sharedCounters")
                 for name in as_dict(consumption.get("counters")) if name not in shared[counter_set]]
    return errs


def _device_node_selection(device: Object, path: Path, per_device: bool) -> ErrorList:
    keys = ("nodeName", "nodeSelector", "allNodes")
    if not per_device:
        if any(device.get(k) is not None for k in keys):
            return [field.invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                              "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")]
        return []
    errs: ErrorList = []
    chosen: list[str] = []
    if device.get("nodeName") is not None:
        if device["nodeName"]:
            chosen.append("`nodeName`")
            errs += validate_node_name(device["nodeName"], path.child("nodeName"))
        else:
            errs.append(field.invalid(path.child("nodeName"), "", "must not be empty"))
    if device.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        errs += validate_node_selector(as_dict(device["nodeSelector"]), path.child("nodeSelector"))
    if device.get("allNodes") is True:
        chosen.append("`allNodes`")
    elif device.get("allNodes") is not None:
        errs.append(field.invalid(path.child("allNodes"), device["allNodes"], "must be either unset or set to true"))
    if not chosen:
        errs.append(field.required(path, DEVICE_NODE_SELECTION))
    elif len(chosen) > 1:
        errs.append(field.invalid(path, "{" + ", ".join(chosen) + "}", DEVICE_NODE_SELECTION))
    return errs


def validate_attribute(attribute: Any, path: Path) -> ErrorList:
    """Exactly one of int, bool, string (64 bytes at most) or version (semver 2.0.0)."""
    attribute = as_dict(attribute)
    present = [k for k in ("int", "bool", "string", "version") if attribute.get(k) is not None]
    errs: ErrorList = []
    if attribute.get("string") is not None and len(str(attribute["string"]).encode()) > ATTRIBUTE_VALUE_MAX_LENGTH:
        errs.append(field.too_long(path.child("string"), "", ATTRIBUTE_VALUE_MAX_LENGTH))
    if attribute.get("version") is not None:
        version = str(attribute["version"])
        if not SEMVER.fullmatch(version):
            errs.append(field.invalid(path.child("version"), version,
                                      "must be a string compatible with semver.org spec 2.0.0"))
        if len(version.encode()) > ATTRIBUTE_VALUE_MAX_LENGTH:
            errs.append(field.too_long(path.child("version"), "", ATTRIBUTE_VALUE_MAX_LENGTH))
    if not present:
        errs.append(field.required(path, "exactly one value must be specified"))
    elif len(present) > 1:
        errs.append(field.invalid(path, gostruct.render("DeviceAttribute", attribute),
                                  "exactly one value must be specified"))
    return errs


def validate_slice_object(obj: Object, old: Object | None = None) -> ErrorList:
    return validate_slice_spec(as_dict(obj.get("spec")), None if old is None else as_dict(old.get("spec")),
                               Path("spec"))
