"""replicationcontrollers/scale (pkg/registry/core/replicationcontroller/storage): spec.replicas, with
the status's replicas and the selector map as a string."""

from __future__ import annotations

from typing import Any

from ....registry import scale
from ....registry.store import Store

Object = dict[str, Any]


def selector_string(selector: dict[str, str] | None) -> str:
    """labels.SelectorFromSet(...).String(): sorted key=value pairs."""
    return ",".join(f"{k}={v}" for k, v in sorted((selector or {}).items()))


def _status(rc: Object) -> Object:
    """scaleFromRC."""
    status: Object = {"replicas": (rc.get("status") or {}).get("replicas") or 0}
    selector = selector_string((rc.get("spec") or {}).get("selector"))
    if selector:
        status["selector"] = selector
    return status


VIEW = scale.ScaleView(("spec", "replicas"), _status, "v1")


class ScaleREST(scale.ScaleREST):
    def __init__(self, controllers: Store):
        super().__init__(controllers, VIEW)
