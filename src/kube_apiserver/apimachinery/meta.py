"""ObjectMeta accessors and the server-set fields (uid, timestamps) on plain dict objects."""

from __future__ import annotations

import datetime
from typing import Any

from .clock import current_clock, current_ids

Object = dict[str, Any]


def now_rfc3339() -> str:
    """metav1.Time serializes at second precision in UTC (the server's clock: apimachinery/clock.py)."""
    return current_clock().now().strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> float | None:
    """An RFC 3339 metav1.Time as seconds since the epoch (None: unset or unreadable)."""
    if not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def new_uid(resource: str = "", namespace: str = "", name: str = "") -> str:
    """A new UID (uuid4; seeded under --deterministic from what is named: apimachinery/clock.py)."""
    return current_ids().uid(resource, namespace, name)


def metadata(obj: Object) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def name_of(obj: Object) -> str:
    meta = obj.get("metadata")
    return meta.get("name", "") if isinstance(meta, dict) else ""


def namespace_of(obj: Object) -> str:
    meta = obj.get("metadata")
    return meta.get("namespace", "") if isinstance(meta, dict) else ""


def labels_of(obj: Object) -> dict[str, str]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


def resource_version_of(obj: Object) -> str:
    meta = obj.get("metadata")
    return meta.get("resourceVersion", "") if isinstance(meta, dict) else ""


def parse_resource_version(value: str | None) -> int:
    """'' means 0; anything not a non-negative integer is the caller's error."""
    if not value:
        return 0
    rv = int(value)
    if rv < 0:
        raise ValueError(value)
    return rv


def list_object(api_version: str, kind: str, items: list[Object], resource_version: str,
                continue_token: str = "", remaining: int | None = None) -> Object:
    meta: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    return {"kind": kind, "apiVersion": api_version, "metadata": meta, "items": items}


def spec_of(obj: Object) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def status_of(obj: Object) -> dict[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}
