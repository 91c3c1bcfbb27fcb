"""replicationcontrollers/scale (pkg/registry/core/replicationcontroller/storage): an autoscaling/v1
Scale view of a ReplicationController; writing it sets spec.replicas."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import errors, field, validation
from ....apimachinery.field import Path
from ....registry.context import Context
from ....registry.rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from ....registry.store import Store
from ....registry.strategy import Strategy

Object = dict[str, Any]
SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def selector_string(selector: dict[str, str] | None) -> str:
    """labels.SelectorFromSet(...).String(): sorted key=value pairs."""
    return ",".join(f"{k}={v}" for k, v in sorted((selector or {}).items()))


def scale_of(rc: Object) -> Object:
    """scaleFromRC."""
    meta = rc.get("metadata") or {}
    spec, status = rc.get("spec") or {}, rc.get("status") or {}
    scale: Object = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                     "metadata": {k: meta[k] for k in SCALE_META if k in meta},
                     "spec": {}, "status": {"replicas": status.get("replicas") or 0}}
    if spec.get("replicas"):
        scale["spec"]["replicas"] = spec["replicas"]
    selector = selector_string(spec.get("selector"))
    if selector:
        scale["status"]["selector"] = selector
    return scale


def validate_scale(scale: Object) -> field.ErrorList:
    """ValidateScale (pkg/apis/autoscaling/validation)."""
    errs = validation.validate_object_meta(scale.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           Path("metadata"))
    replicas = (scale.get("spec") or {}).get("replicas") or 0
    if replicas < 0:
        errs.append(field.invalid(Path("spec", "replicas"), replicas, "must be greater than or equal to 0"))
    return errs


class ScaleStrategy(Strategy):
    """What the handlers ask of a Scale: no defaults; nothing reset."""


class ScaleREST:
    """GET, PUT and PATCH of replicationcontrollers/scale."""

    def __init__(self, controllers: Store):
        self.info = ResourceInfo("autoscaling", "v1", controllers.info.resource, "Scale", "", True,
                                 subresource="scale")
        self.controllers = controllers
        self.strategy = ScaleStrategy(self.info)

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return scale_of(await self.controllers.get(ctx, name))

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        async def to_controller(_ctx: Context, rc: Object | None) -> Object:
            if rc is None:
                raise errors.not_found(self.controllers.info.resource, "", name)
            rc = copy.deepcopy(rc)
            old = scale_of(rc)
            scale = await obj_info.updated_object(_ctx, old)
            if update_validation is not None:
                await update_validation(_ctx, scale, old)
            errs = validate_scale(scale)
            if errs:
                raise errors.invalid("Scale", "autoscaling", name, errs)
            if (scale.get("metadata") or {}).get("resourceVersion"):
                rc["metadata"]["resourceVersion"] = scale["metadata"]["resourceVersion"]
            rc.setdefault("spec", {})["replicas"] = (scale.get("spec") or {}).get("replicas") or 0
            return rc

        rc, _ = await self.controllers.update(ctx, name, UpdatedObjectInfo(name, to_controller), None, None, False,
                                              options)
        return scale_of(rc), False
