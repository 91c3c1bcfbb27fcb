"""The scale subresource of a custom resource (pkg/registry/customresource/etcd.go ScaleREST): the
generic Scale subresource over the paths the CRD names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...registry import scale
from ...registry.scale import ScaleView
from ...registry.store import Store

Object = dict[str, Any]


@dataclass(frozen=True)
class ScalePaths:
    spec_replicas: str
    status_replicas: str
    label_selector: str = ""

    @classmethod
    def of(cls, scale: Object | None) -> ScalePaths | None:
        if not isinstance(scale, dict):
            return None
        return cls(scale.get("specReplicasPath", ""), scale.get("statusReplicasPath", ""),
                   scale.get("labelSelectorPath") or "")

    @staticmethod
    def nested(obj: Object, path: str) -> tuple[Any, str]:
        """(value or None, why it cannot be read) at a dotted path (unstructured.NestedFieldNoCopy)."""
        current: Any = obj
        steps = path.lstrip(".").split(".")
        for i, step in enumerate(steps):
            if current is None:
                return None, ""
            if not isinstance(current, dict):
                shown = ".".join(steps[:i])
                return None, f"{path} accessor error: {current} is of the type {type(current).__name__}, " \
                              f"expected map[string]interface{{}}" if shown else ""
            current = current.get(step)
        return current, ""


def scale_view(paths: ScalePaths, api_version: str) -> ScaleView:
    """The Scale of a custom resource: the CRD's replicas paths, its label selector path as a string."""
    def status(obj: Object) -> Object:
        replicas, _ = paths.nested(obj, paths.status_replicas)
        out: Object = {"replicas": replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 0}
        if paths.label_selector:
            selector, _ = paths.nested(obj, paths.label_selector)
            if isinstance(selector, str) and selector:
                out["selector"] = selector
        return out
    return ScaleView(tuple(paths.spec_replicas.lstrip(".").split(".")), status, api_version)


class ScaleREST(scale.ScaleREST):
    """<plural>/scale of a custom resource."""

    def __init__(self, parent: Store, paths: ScalePaths):
        super().__init__(parent, scale_view(paths, parent.info.api_version))
