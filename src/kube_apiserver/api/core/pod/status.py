"""Writing a pod's status (podStatusStrategy, ValidatePodStatusUpdate) and its ephemeral containers
(ValidatePodEphemeralContainersUpdate)."""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .strategy import POD_OPTIONS
from .update import validate_annotation_updates
from .validation import validate_metadata_and_spec

Object = dict[str, Any]
SYSTEM_CONDITIONS = ("PodScheduled", "Ready", "Initialized")
STATUS = Path("status")


def keep_pod_status(new: Object, old: Object) -> Object:
    """The stored pod with the new status; owner references and the QoS class stay as stored."""
    merged = copy.deepcopy({k: v for k, v in old.items() if k not in ("metadata", "status")})
    merged["metadata"] = dict(new.get("metadata") or {})
    for key in ("ownerReferences",):
        if key in old["metadata"]:
            merged["metadata"][key] = copy.deepcopy(old["metadata"][key])
        else:
            merged["metadata"].pop(key, None)
    status = copy.deepcopy(new.get("status")) if isinstance(new.get("status"), dict) else {}
    old_status = old.get("status") or {}
    if not status.get("qosClass") and old_status.get("qosClass"):
        status["qosClass"] = old_status["qosClass"]
    if not status.get("observedGeneration") and old_status.get("observedGeneration"):
        status["observedGeneration"] = old_status["observedGeneration"]
    merged["status"] = status
    return merged


def _ips(entries: Any, path: Path) -> ErrorList:
    entries = entries if isinstance(entries, list) else []
    errs: ErrorList = []
    for i, entry in enumerate(entries):
        errs += validation.is_valid_ip(path.index(i), (entry or {}).get("ip") or "")
    if len(entries) > 1:
        ips = [(e or {}).get("ip") or "" for e in entries]
        try:
            families = {ipaddress.ip_address(ip).version for ip in ips}
        except ValueError:
            families = set()
        if len(ips) > 2 or len(families) != 2:
            errs.append(field.invalid(path, entries, "may specify no more than one IP for each IP family"))
        seen: set[str] = set()
        for i, ip in enumerate(ips):
            if ip in seen:
                errs.append(field.duplicate(path.index(i), entries[i]))
            seen.add(ip)
    return errs


def _state_transitions(new: Any, old: Any, restart_policy: str, path: Path) -> ErrorList:
    if restart_policy == "Always":
        return []
    errs: ErrorList = []
    for i, previous in enumerate(old or []):
        terminated = (previous.get("state") or {}).get("terminated")
        if terminated is None or (terminated.get("exitCode") and restart_policy == "OnFailure"):
            continue
        for status in new or []:
            if status.get("name") == previous.get("name") and (status.get("state") or {}).get("terminated") is None:
                errs.append(field.forbidden(path.index(i).child("state"), "may not be transitioned to non-terminated "
                                                                          "state"))
    return errs


def validate_status_update(new: Object, old: Object) -> ErrorList:
    errs = validate_annotation_updates(new, old)
    status, old_status = new.get("status") or {}, old.get("status") or {}
    for i, condition in enumerate(status.get("conditions") or []):
        kind = condition.get("type") or ""
        if kind not in SYSTEM_CONDITIONS:
            errs += [field.invalid(Path("metadata", "conditions").index(i).child("Type"), kind, m)
                     for m in validation.is_qualified_name(kind)]
    nominated = status.get("nominatedNodeName") or ""
    if nominated and nominated != old_status.get("nominatedNodeName"):
        errs += [field.invalid(STATUS.child("nominatedNodeName"), nominated, m)
                 for m in validation.name_is_dns_subdomain(nominated, False)]
    errs += validation.validate_immutable_field(status.get("qosClass") or "", old_status.get("qosClass") or "",
                                                STATUS.child("qosClass"))
    restart = (old.get("spec") or {}).get("restartPolicy") or ""
    errs += _state_transitions(status.get("containerStatuses"), old_status.get("containerStatuses"), restart,
                               STATUS.child("containerStatuses"))
    errs += _ips(status.get("podIPs"), STATUS.child("podIPs"))
    host_ips = status.get("hostIPs") or []
    if host_ips and (host_ips[0] or {}).get("ip") != (status.get("hostIP") or ""):
        errs.append(field.invalid(STATUS.child("hostIPs").index(0).child("ip"), host_ips[0].get("ip") or "",
                                  "must be equal to `hostIP`"))
    return errs + (_ips(host_ips, STATUS.child("hostIPs")) if host_ips else [])


def validate_ephemeral_update(new: Object, old: Object) -> ErrorList:
    errs = validate_metadata_and_spec(new, POD_OPTIONS) + validate_annotation_updates(new, old)
    if "kubernetes.io/config.mirror" in (old["metadata"].get("annotations") or {}):
        return [field.forbidden(Path(""), "static pods do not support ephemeral containers")]
    path = Path("spec", "ephemeralContainers")
    current = {c.get("name"): c for c in (new.get("spec") or {}).get("ephemeralContainers") or []}
    for previous in (old.get("spec") or {}).get("ephemeralContainers") or []:
        name = previous.get("name", "")
        if name not in current:
            errs.append(field.forbidden(path, f'existing ephemeral containers "{name}" may not be removed\n'))
        elif current[name] != previous:
            errs.append(field.forbidden(path, f'existing ephemeral containers "{name}" may not be changed\n'))
    return errs
