"""Fields behind a disabled DRA feature gate are dropped on create and update, unless the stored
object already uses them (the registry strategies' dropDisabled* functions, v1.34)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import features
from .common import as_dict, as_list
from .defaults import requests_of

Object = dict[str, Any]


def _top_requests(spec: Object) -> list[Object]:
    return [r for r in as_list(as_dict(spec.get("devices")).get("requests")) if isinstance(r, dict)]


def _results(claim: Object | None) -> list[Object]:
    status = as_dict((claim or {}).get("status"))
    return [r for r in as_list(as_dict(as_dict(status.get("allocation")).get("devices")).get("results"))
            if isinstance(r, dict)]


def _status_devices(claim: Object | None) -> list[Object]:
    return [d for d in as_list(as_dict((claim or {}).get("status")).get("devices")) if isinstance(d, dict)]


# ---- claim specs (ResourceClaims and the specs in templates) ----

def drop_claim_spec(spec: Object, old_spec: Object | None, admin_in_use: bool = False) -> None:
    old = as_dict(old_spec)
    if not features.enabled(features.PRIORITIZED_LIST) and \
            not any(r.get("firstAvailable") for r in _top_requests(old)):
        for request in _top_requests(spec):
            request.pop("firstAvailable", None)
    if not features.enabled(features.ADMIN_ACCESS) and not (admin_in_use or _admin_access_in_spec(old)):
        for request in _top_requests(spec):
            as_dict(request.get("exactly")).pop("adminAccess", None)
    if not features.enabled(features.CONSUMABLE_CAPACITY) and not _capacity_in_spec(old):
        # distinctAttribute stays: v1.34 clears it on a copy of each constraint.
        for request in requests_of(spec):
            request.pop("capacity", None)


def _admin_access_in_spec(spec: Object) -> bool:
    return any(as_dict(r.get("exactly")).get("adminAccess") is not None for r in _top_requests(spec))


def _capacity_in_spec(spec: Object) -> bool:
    return any(r.get("capacity") is not None for r in requests_of(spec))


# ---- ResourceClaims ----

def drop_claim(claim: Object, old: Object | None) -> None:
    spec, old_spec = as_dict(claim.get("spec")), as_dict((old or {}).get("spec"))
    old_admin = _admin_access_in_spec(old_spec) or any(r.get("adminAccess") is not None for r in _results(old))
    if not features.enabled(features.ADMIN_ACCESS) and not old_admin:
        for result in _results(claim):
            result.pop("adminAccess", None)
    drop_claim_spec(spec, old_spec if old is not None else None, old_admin)
    if not features.enabled(features.DEVICE_STATUS) and not _status_devices(old):
        as_dict(claim.get("status")).pop("devices", None)
    if not features.enabled(features.CONSUMABLE_CAPACITY) and not _capacity_in_use(old):
        for result in _results(claim):
            result.pop("shareID", None)
            result.pop("consumedCapacity", None)
        for device in _status_devices(claim):
            device.pop("shareID", None)
    if not features.enabled(features.BINDING_CONDITIONS) and \
            not any(r.get("bindingConditions") or r.get("bindingFailureConditions") for r in _results(old)):
        for result in _results(claim):
            result.pop("bindingConditions", None)
            result.pop("bindingFailureConditions", None)


def _capacity_in_use(claim: Object | None) -> bool:
    if claim is None:
        return False
    spec = as_dict(claim.get("spec"))
    constraints = as_list(as_dict(spec.get("devices")).get("constraints"))
    return (any(as_dict(c).get("distinctAttribute") is not None for c in constraints) or _capacity_in_spec(spec)
            or any(r.get("shareID") is not None or r.get("consumedCapacity") is not None for r in _results(claim))
            or any(d.get("shareID") is not None for d in _status_devices(claim)))


def _device_id(item: Object) -> tuple[str, ...]:
    return tuple(str(item.get(k) or "") for k in ("driver", "pool", "device", "shareID"))


def drop_deallocated_devices(claim: Object, old: Object) -> None:
    """A status update that removes an allocated device also removes that device's status."""
    if not features.enabled(features.DEVICE_STATUS) and not _status_devices(old):
        return
    gone = {_device_id(r) for r in _results(old)} - {_device_id(r) for r in _results(claim)}
    status = as_dict(claim.get("status"))
    kept = [d for d in _status_devices(claim) if _device_id(d) not in gone]
    if kept:
        status["devices"] = kept
    else:
        status.pop("devices", None)


# ---- ResourceSlices ----

def _devices(obj: Object | None) -> Iterator[Object]:
    spec = as_dict((obj or {}).get("spec"))
    return (d for d in as_list(spec.get("devices")) if isinstance(d, dict))


def drop_slice(obj: Object, old: Object | None) -> None:
    spec = as_dict(obj.get("spec"))
    if not features.enabled(features.DEVICE_TAINTS) and not any(d.get("taints") for d in _devices(old)):
        for device in _devices(obj):
            device.pop("taints", None)
    if not features.enabled(features.PARTITIONABLE_DEVICES) and not _partitionable_in_use(old):
        spec.pop("sharedCounters", None)
        spec.pop("perDeviceNodeSelection", None)
        for device in _devices(obj):
            for key in ("consumesCounters", "nodeName", "nodeSelector", "allNodes"):
                device.pop(key, None)
    binding_keys = ("bindingConditions", "bindingFailureConditions", "bindsToNode")
    binding_on = features.enabled(features.BINDING_CONDITIONS) and features.enabled(features.DEVICE_STATUS)
    if not binding_on and not any(d.get(k) not in (None, []) for d in _devices(old) for k in binding_keys):
        for device in _devices(obj):
            for key in binding_keys:
                device.pop(key, None)
    if not features.enabled(features.CONSUMABLE_CAPACITY) and not _multi_allocation_in_use(old):
        for device in _devices(obj):
            device.pop("allowMultipleAllocations", None)
            for capacity in as_dict(device.get("capacity")).values():
                as_dict(capacity).pop("requestPolicy", None)


def _partitionable_in_use(obj: Object | None) -> bool:
    spec = as_dict((obj or {}).get("spec"))
    if spec.get("sharedCounters") or spec.get("perDeviceNodeSelection") is not None:
        return True
    return any(d.get("consumesCounters") or any(d.get(k) is not None for k in ("nodeName", "nodeSelector",
                                                                              "allNodes")) for d in _devices(obj))


def _multi_allocation_in_use(obj: Object | None) -> bool:
    return any(d.get("allowMultipleAllocations") is not None or
               any(as_dict(c).get("requestPolicy") is not None for c in as_dict(d.get("capacity")).values())
               for d in _devices(obj))


# ---- DeviceClasses ----

def drop_device_class(obj: Object, old: Object | None) -> None:
    old_spec = as_dict((old or {}).get("spec"))
    if not features.enabled(features.EXTENDED_RESOURCE) and old_spec.get("extendedResourceName") is None:
        as_dict(obj.get("spec")).pop("extendedResourceName", None)
