"""Node validation (ValidateNode, ValidateNodeUpdate, validateNodeTaints in pkg/apis/core/validation)."""

from __future__ import annotations

import ipaddress
from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, OrderedStruct, Path
from ....apimachinery.meta import spec_of, status_of
from ...node.resources import validate_quantity_value
from ..podspec.resources import parsed
from ..podspec.scheduling import TAINT_EFFECTS

Object = dict[str, Any]
POD_CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'
PROVIDER_ID_CHANGE = 'node updates may not change providerID except from "" to valid'


def validate_taint_effect(effect: str, path: Path) -> ErrorList:
    """validateTaintEffect with allowEmpty false."""
    if not effect:
        return [field.required(path, "")]
    if effect not in TAINT_EFFECTS:
        return [field.not_supported(path, effect, TAINT_EFFECTS)]
    return []


def _taint_value(taint: Object) -> OrderedStruct:
    return OrderedStruct((("Key", taint.get("key") or ""), ("Value", taint.get("value") or ""),
                          ("Effect", taint.get("effect") or ""), ("TimeAdded", taint.get("timeAdded"))))


def validate_taints(taints: Any, path: Path) -> ErrorList:
    """validateNodeTaints: valid keys, values and effects; unique by key and effect."""
    errs: ErrorList = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(t if isinstance(t, dict) else {} for t in taints or []):
        idx = path.index(i)
        key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
        errs += validation.validate_label_name(key, idx.child("key"))
        msgs = validation.is_valid_label_value(value)
        if msgs:
            errs.append(field.invalid(idx.child("value"), value, ";".join(msgs)))
        errs += validate_taint_effect(effect, idx.child("effect"))
        if (effect, key) in seen:
            dup = field.duplicate(idx, _taint_value(taint))
            dup.detail = "taints must be unique by key and effect pair"
            errs.append(dup)
            continue
        seen.add((effect, key))
    return errs


def validate_node_resources(obj: Object) -> ErrorList:
    """ValidateNodeResources: capacity and allocatable quantities."""
    errs: ErrorList = []
    status = status_of(obj)
    for key in ("capacity", "allocatable"):
        for name, value in sorted(parsed(status.get(key)).items()):
            errs += validate_quantity_value(name, value, field.Path("status", key, name))
    return errs


def _family(cidr: str) -> int | None:
    try:
        return ipaddress.ip_network(cidr, strict=False).version
    except ValueError:
        return None


def validate_pod_cidrs(cidrs: list[str]) -> ErrorList:
    path = field.Path("spec", "podCIDRs")
    errs: ErrorList = []
    for i, cidr in enumerate(cidrs):
        errs += validation.is_valid_cidr(path.index(i), cidr)
    if len(cidrs) > 1:
        families = {_family(c) for c in cidrs}
        if len(cidrs) > 2 or families != {4, 6}:
            errs.append(field.invalid(path, cidrs, "may specify no more than one CIDR for each IP family"))
        seen: set[str] = set()
        for i, cidr in enumerate(cidrs):
            if cidr in seen:
                errs.append(field.duplicate(path.index(i), cidr))
            seen.add(cidr)
    return errs


def validate_node(obj: Object) -> ErrorList:
    """ValidateNode, without ValidateObjectMeta (the generic strategy checks it)."""
    spec = spec_of(obj)
    errs: ErrorList = []
    if spec.get("taints"):
        errs += validate_taints(spec["taints"], field.Path("metadata", "taints"))
    errs += validate_node_resources(obj)
    if spec.get("podCIDRs"):
        errs += validate_pod_cidrs(list(spec["podCIDRs"]))
    return errs


def _duplicate_addresses(obj: Object) -> ErrorList:
    errs: ErrorList = []
    seen: list[Any] = []
    for i, address in enumerate(status_of(obj).get("addresses") or []):
        if address in seen:
            value = OrderedStruct((("type", address.get("type") or ""), ("address", address.get("address") or "")))
            errs.append(field.duplicate(field.Path("status", "addresses").index(i), value))
        seen.append(address)
    return errs


def _cidr_changes(old: list[str], new: list[str]) -> int:
    """podCIDRs are set once: one error for a new length, else one per changed entry."""
    if not old:
        return 0
    if len(old) != len(new):
        return 1
    return sum(a != b for a, b in zip(old, new, strict=True))


def validate_node_update(obj: Object, old: Object) -> ErrorList:
    """ValidateNodeUpdate, without ValidateObjectMetaUpdate (the generic strategy checks it)."""
    spec, old_spec = spec_of(obj), spec_of(old)
    errs = validate_node_resources(obj) + _duplicate_addresses(obj)
    old_cidrs, cidrs = old_spec.get("podCIDRs") or [], spec.get("podCIDRs") or []
    errs += [field.forbidden(field.Path("spec", "podCIDRs"), POD_CIDR_CHANGE)] * _cidr_changes(old_cidrs, cidrs)
    old_provider = old_spec.get("providerID") or ""
    if old_provider and old_provider != (spec.get("providerID") or ""):
        errs.append(field.forbidden(field.Path("spec", "providerID"), PROVIDER_ID_CHANGE))
    if spec.get("taints"):
        errs += validate_taints(spec["taints"], field.Path("metadata", "taints"))
    if (spec.get("externalID") or "") != (old_spec.get("externalID") or ""):
        errs.append(field.forbidden(field.Path("spec", "externalID"), "may not be updated"))
    return errs
