"""The scale subresource of a custom resource (pkg/registry/customresource/etcd.go ScaleREST): an
autoscaling/v1 Scale read from and written to the paths the CRD names."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

from ...apimachinery import errors
from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
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

    @staticmethod
    def set(obj: Object, path: str, value: Any) -> None:
        current = obj
        steps = path.lstrip(".").split(".")
        for step in steps[:-1]:
            if not isinstance(current.get(step), dict):
                current[step] = {}
            current = current[step]
        current[steps[-1]] = value


def to_scale(obj: Object, paths: ScalePaths) -> Object:
    meta = obj["metadata"]
    spec, _ = paths.nested(obj, paths.spec_replicas)
    status, _ = paths.nested(obj, paths.status_replicas)
    selector, _ = paths.nested(obj, paths.label_selector) if paths.label_selector else (None, "")
    scale_status: Object = {"replicas": status if isinstance(status, int) else 0}
    if isinstance(selector, str) and selector:
        scale_status["selector"] = selector
    out_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": out_meta,
            "spec": {"replicas": spec if isinstance(spec, int) else 0}, "status": scale_status}


class ScaleREST:
    """GET, PUT and PATCH of <plural>/scale."""

    def __init__(self, parent: Store, paths: ScalePaths):
        self.parent = parent
        self.paths = paths
        self.info = replace(parent.info, subresource="scale", group="autoscaling", version="v1", kind="Scale")
        self.strategy = None

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return to_scale(await self.parent.get(ctx, name), self.paths)

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        async def scaled(ctx_: Context, old: Object | None) -> Object:
            if old is None:
                raise errors.not_found(self.parent.info.resource, self.parent.info.group, name)
            old_scale = to_scale(old, self.paths)
            scale = await obj_info.updated_object(ctx_, old_scale)
            replicas = (scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool):
                raise errors.bad_request("the replicas of the scale must be an integer")
            version = (scale.get("metadata") or {}).get("resourceVersion")
            obj = copy.deepcopy(old)
            if version:
                obj["metadata"]["resourceVersion"] = version
            self.paths.set(obj, self.paths.spec_replicas, replicas)
            return obj

        info = UpdatedObjectInfo(name, scaled)
        out, created = await self.parent.update(ctx, name, info, None, None, False, options)
        return to_scale(out, self.paths), created
