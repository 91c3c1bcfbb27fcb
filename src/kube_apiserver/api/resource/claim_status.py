"""ResourceClaim status updates as pkg/apis/resource/validation (v1.34) checks them: consumers in
reservedFor, the allocation result (set once, then immutable) and the drivers' per-device status."""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, OrderedStruct, Path
from ..core.podspec.scheduling import validate_node_selector_term
from ..policy.conditions import validate_conditions
from . import gostruct
from .common import (
    CONFIG_MAX,
    as_dict,
    as_list,
    dns_label,
    gather_request_names,
    request_ref_errors,
    string_key,
    validate_binding_conditions,
    validate_config_source,
    validate_device_configuration,
    validate_driver_name,
    validate_raw_extension,
    validate_request_refs,
    validate_set,
    validate_slice,
)

Object = dict[str, Any]
RESERVED_FOR_MAX = 256
RESULTS_MAX = 32
DEVICE_CONDITIONS_MAX = 8
DEVICE_DATA_MAX_LENGTH = 10 * 1024
NETWORK_IPS_MAX = 16
INTERFACE_NAME_MAX = 256
HARDWARE_ADDRESS_MAX = 128
POOL_NAME_MAX = 253
_HEX_PAIRS = (0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34)
_HEX = re.compile("[0-9a-fA-F]{2}")


def validate_pool_name(name: str, path: Path) -> ErrorList:
    """One or more DNS subdomains separated by slashes, 253 bytes at most."""
    if not name:
        return [field.required(path, "")]
    errs: ErrorList = []
    if len(name.encode()) > POOL_NAME_MAX:
        errs.append(field.too_long(path, "", POOL_NAME_MAX))
    for part in name.split("/"):
        errs += [field.invalid(path, part, msg) for msg in validation.is_dns1123_subdomain(part)]
    return errs


def validate_node_selector(selector: Object, path: Path) -> ErrorList:
    """corevalidation.ValidateNodeSelector: at least one term, each valid."""
    terms_path = path.child("nodeSelectorTerms")
    terms = as_list(selector.get("nodeSelectorTerms"))
    if not terms:
        return [field.required(terms_path, "must have at least one node selector term")]
    return [e for i, term in enumerate(terms)
            for e in validate_node_selector_term(as_dict(term), terms_path.index(i), False)]


def uuid_error(uid: str) -> str | None:
    """google/uuid's Validate."""
    if len(uid) == 45:
        if uid[:9].lower() != "urn:uuid:":
            return f"invalid urn prefix: {field.go_quote(uid[:9])}"
        uid = uid[9:]
    elif len(uid) == 38:
        if uid[0] != "{" or uid[-1] != "}":
            return "invalid bracketed UUID format"
        uid = uid[1:-1]
    elif len(uid) == 32:
        return None if all(_HEX.fullmatch(uid[i:i + 2]) for i in range(0, 32, 2)) else "invalid UUID format"
    elif len(uid) != 36:
        return f"invalid UUID length: {len(uid)}"
    if any(uid[i] != "-" for i in (8, 13, 18, 23)) or not all(_HEX.fullmatch(uid[i:i + 2]) for i in _HEX_PAIRS):
        return "invalid UUID format"
    return None


def validate_uid(uid: str, path: Path) -> ErrorList:
    why = uuid_error(uid)
    if why is not None:
        return [field.invalid(path, uid, f"error validating uid: {why}")]
    if len(uid) != 36 or uid != uid.lower():
        return [field.invalid(path, uid, "uid must be in RFC 4122 normalized form, "
                                         "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")]
    return []


def shared_device_id(item: Object) -> OrderedStruct:
    """structured.SharedDeviceID as JSON: driver, pool, device and share ID ("" when unset)."""
    return OrderedStruct((("Driver", item.get("driver") or ""), ("Pool", item.get("pool") or ""),
                          ("Device", item.get("device") or ""), ("ShareID", item.get("shareID") or "")))


# ---- the allocation result ----

def validate_allocation(allocation: Object, path: Path, names: dict[str, set[str] | None]) -> ErrorList:
    devices, devices_path = as_dict(allocation.get("devices")), path.child("devices")
    errs = validate_slice(as_list(devices.get("results")), RESULTS_MAX,
                          lambda r, p: validate_result(as_dict(r), p, names), devices_path.child("results"))
    errs += validate_slice(as_list(devices.get("config")), 2 * CONFIG_MAX,  # class and claim configs
                           lambda c, p: validate_allocation_config(as_dict(c), p, names),
                           devices_path.child("config"))
    if allocation.get("nodeSelector") is not None:
        errs += validate_node_selector(as_dict(allocation["nodeSelector"]), path.child("nodeSelector"))
    return errs


def validate_result(result: Object, path: Path, names: dict[str, set[str] | None]) -> ErrorList:
    errs = request_ref_errors(result.get("request") or "", path.child("request"), names)
    errs += validate_driver_name(result.get("driver") or "", path.child("driver"))
    errs += validate_pool_name(result.get("pool") or "", path.child("pool"))
    errs += dns_label(result.get("device") or "", path.child("device"))
    errs += validate_binding_conditions(result, path)
    if result.get("shareID") is not None:
        errs += validate_uid(result["shareID"], path.child("shareID"))
    return errs


def validate_allocation_config(config: Object, path: Path, names: dict[str, set[str] | None]) -> ErrorList:
    errs = validate_config_source(config.get("source") or "", path.child("source"))
    errs += validate_request_refs(as_list(config.get("requests")), path.child("requests"), names)
    return errs + validate_device_configuration(config, path)


# ---- the drivers' device status ----

def interface_address_errors(value: str, path: Path) -> ErrorList:
    """IsValidInterfaceAddress: an address with a prefix length, in canonical form."""
    address, slash, bits = value.partition("/")
    ip = validation.parse_ip_sloppy(address) if slash else None
    width = 32 if ip is not None and ip.version == 4 else 128
    if ip is None or not bits.isascii() or not bits.isdigit() or int(bits) > width:
        return [field.invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    prefix = int(bits)
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None and prefix > 32:
        prefix -= 96  # an IPv4-mapped address prints as IPv4 with an IPv4 prefix length
    canonical = f"{validation.go_ip_string(ip)}/{prefix}"
    if value != canonical:
        return [field.invalid(path, value, f"must be in canonical form ({field.go_quote(canonical)})")]
    return []


def validate_network_data(data: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    if len((data.get("interfaceName") or "").encode()) > INTERFACE_NAME_MAX:
        errs.append(field.too_long(path.child("interfaceName"), "", INTERFACE_NAME_MAX))
    if len((data.get("hardwareAddress") or "").encode()) > HARDWARE_ADDRESS_MAX:
        errs.append(field.too_long(path.child("hardwareAddress"), "", HARDWARE_ADDRESS_MAX))
    return errs + validate_set(as_list(data.get("ips")), NETWORK_IPS_MAX,
                               lambda a, p: interface_address_errors(str(a), p), string_key, path.child("ips"))


def validate_device_status(device: Object, path: Path, allocated: set[OrderedStruct]) -> ErrorList:
    errs = validate_driver_name(device.get("driver") or "", path.child("driver"))
    errs += validate_pool_name(device.get("pool") or "", path.child("pool"))
    errs += dns_label(device.get("device") or "", path.child("device"))
    if device.get("shareID") is not None:
        errs += validate_uid(device["shareID"], path.child("shareID"))
    device_id = shared_device_id(device)
    if device_id not in allocated:
        errs.append(field.invalid(path, device_id, "must be an allocated device in the claim"))
    conditions = as_list(device.get("conditions"))
    if len(conditions) > DEVICE_CONDITIONS_MAX:
        errs.append(field.too_many(path.child("conditions"), len(conditions), DEVICE_CONDITIONS_MAX))
    errs += validate_conditions(conditions, path.child("conditions"))
    if device.get("data") is not None:
        errs += validate_raw_extension(device["data"], path.child("data"), DEVICE_DATA_MAX_LENGTH)
    if device.get("networkData") is not None:
        errs += validate_network_data(as_dict(device["networkData"]), path.child("networkData"))
    return errs


# ---- the whole status ----

def _consumer_ref(ref: Any, path: Path) -> ErrorList:
    ref = as_dict(ref)
    return [field.required(path.child(key), "") for key in ("resource", "name", "uid") if not ref.get(key)]


def _ref_tuple(ref: Any) -> tuple[str, ...]:
    ref = as_dict(ref)
    return tuple(ref.get(k) or "" for k in ("apiGroup", "resource", "name", "uid"))


def _uid_key(ref: Any) -> tuple[Hashable, str]:
    return as_dict(ref).get("uid") or "", "uid"


def validate_status_update(claim: Object, old: Object) -> ErrorList:
    """ValidateResourceClaimStatusUpdate without the metadata checks."""
    status, old_status = as_dict(claim.get("status")), as_dict(old.get("status"))
    names = gather_request_names(as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")))
    path = Path("status")
    reserved = as_list(status.get("reservedFor"))
    errs = validate_set(reserved, RESERVED_FOR_MAX, _consumer_ref, _uid_key, path.child("reservedFor"))
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    results = as_list(as_dict(as_dict(allocation).get("devices")).get("results"))
    allocated = {shared_device_id(as_dict(r)) for r in results}
    errs += validate_set(as_list(status.get("devices")), -1,
                         lambda d, p: validate_device_status(as_dict(d), p, allocated),
                         lambda d: (shared_device_id(as_dict(d)), "deviceID"), path.child("devices"))
    errs += _reserved_for_rules(reserved, as_list(old_status.get("reservedFor")), allocation is not None,
                                bool((claim.get("metadata") or {}).get("deletionTimestamp")), path)
    if old_allocation is not None and allocation is not None:
        # Once set, an allocation never changes: unchanged results are not checked again.
        if not gostruct.semantic_equal("AllocationResult?", allocation, old_allocation):
            errs.append(field.invalid(path.child("allocation"), gostruct.render("AllocationResult", allocation),
                                      validation.FIELD_IMMUTABLE_ERROR_MSG))
    elif allocation is not None:
        errs += validate_allocation(as_dict(allocation), path.child("allocation"), names)
    return errs


def _reserved_for_rules(reserved: list[Any], old_reserved: list[Any], allocated: bool, deleted: bool,
                        path: Path) -> ErrorList:
    """Consumers need an allocation, and none may be added once the claim is being deleted."""
    if not reserved:
        return []
    if not allocated:
        return [field.forbidden(path.child("reservedFor"), "may not be specified when `allocated` is not set")]
    if deleted and {_ref_tuple(r) for r in reserved} - {_ref_tuple(r) for r in old_reserved}:
        return [field.forbidden(path.child("reservedFor"), "new entries may not be added while "
                                                           "`deallocationRequested` or `deletionTimestamp` are set")]
    return []
