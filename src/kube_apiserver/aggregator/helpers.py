"""APIService helpers (k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper): conditions, names,
and the priority order groups and versions are listed in."""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from ..apimachinery.meta import now_rfc3339

Object = dict[str, Any]
GROUP = "apiregistration.k8s.io"
AVAILABLE = "Available"
LEGACY_API_SERVICE_NAME = "v1."
_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_VERSION_TYPES = {"alpha": 0, "beta": 1, None: 2}  # GA sorts above beta, beta above alpha


def spec_of(obj: Object) -> Object:
    return obj.get("spec") or {}


def service_of(obj: Object) -> Object | None:
    """spec.service, or None for a local APIService."""
    return spec_of(obj).get("service") or None


def service_port(service: Object) -> int:
    port = service.get("port")
    return 443 if port is None else port


def name_to_group_version(name: str) -> tuple[str, str]:
    """APIServiceNameToGroupVersion: "v1.apps" -> ("apps", "v1"); "v1." -> ("", "v1")."""
    version, _, group = name.partition(".")
    return group, version


def api_service_name(group: str, version: str) -> str:
    return f"{version}.{group}"


def proxy_path(obj: Object) -> str:
    """Where the APIService's version is served: /apis/<group>/<version>, or /api for "v1."."""
    if obj["metadata"]["name"] == LEGACY_API_SERVICE_NAME:
        return "/api"
    spec = spec_of(obj)
    return f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"


# ---- conditions ----

def get_condition(obj: Object, ctype: str = AVAILABLE) -> Object | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == ctype), None)


def is_available(obj: Object) -> bool:
    condition = get_condition(obj)
    return condition is not None and condition.get("status") == "True"


def local_available_condition() -> Object:
    return {"type": AVAILABLE, "status": "True", "lastTransitionTime": now_rfc3339(), "reason": "Local",
            "message": "Local APIServices are always available"}


def set_condition(obj: Object, condition: Object) -> None:
    """SetAPIServiceCondition: the transition time changes only with the status."""
    existing = get_condition(obj, condition["type"])
    if existing is None:
        obj.setdefault("status", {}).setdefault("conditions", []).append(copy.deepcopy(condition))
        return
    if existing.get("status") != condition["status"]:
        existing["status"] = condition["status"]
        existing["lastTransitionTime"] = condition["lastTransitionTime"]
    for key in ("reason", "message"):
        if condition.get(key):
            existing[key] = condition[key]
        else:
            existing.pop(key, None)


# ---- ordering ----

def _parse_kube_version(version: str) -> tuple[int, int, int] | None:
    match = _KUBE_VERSION.match(version)
    if match is None:
        return None
    minor = int(match.group(3)) if match.group(2) else 0
    return _VERSION_TYPES[match.group(2)], int(match.group(1)), minor


def compare_kube_aware_versions(v1: str, v2: str) -> int:
    """version.CompareKubeAwareVersionStrings: > 0 when v1 is the more preferred (v2 > v1 > v1beta2 >
    v1alpha1 > other strings, those in reverse lexical order)."""
    if v1 == v2:
        return 0
    p1, p2 = _parse_kube_version(v1), _parse_kube_version(v2)
    if p1 is None and p2 is None:
        return (v2 > v1) - (v2 < v1)
    if p1 is None:
        return -1
    if p2 is None:
        return 1
    return next((a - b for a, b in zip(p1, p2, strict=True) if a != b), 0)


def _by_version_priority(a: Object, b: Object) -> int:
    pa, pb = spec_of(a).get("versionPriority", 0), spec_of(b).get("versionPriority", 0)
    if pa != pb:
        return pb - pa
    return -compare_kube_aware_versions(spec_of(a).get("version", ""), spec_of(b).get("version", ""))


def sorted_by_group_and_version(services: list[Object]) -> list[list[Object]]:
    """SortedByGroupAndVersion: groups by their highest groupPriorityMinimum (then name), each group's
    APIServices by versionPriority (then kube-aware version order)."""
    ordered = sorted(services, key=lambda s: (-spec_of(s).get("groupPriorityMinimum", 0), s["metadata"]["name"]))
    groups: dict[str, list[Object]] = {}
    for service in ordered:
        groups.setdefault(spec_of(service).get("group", ""), []).append(service)
    return [sorted(members, key=functools.cmp_to_key(_by_version_priority)) for members in groups.values()]
