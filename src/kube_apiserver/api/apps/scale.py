"""The scale subresource of deployments, replicasets and statefulsets: an autoscaling/v1 Scale read
from and written to the workload (pkg/registry/apps/*/storage ScaleREST). A write validates the
Scale, conflicts (409) when its resourceVersion or uid is not the workload's, and goes through the
workload's own strategy (validation, generation)."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import errors, field, labels, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from ...registry.store import Store
from .scalefields import to_parent, to_subresource

Object = dict[str, Any]
SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def scale_of(obj: Object) -> Object:
    """scaleFromDeployment (and its ReplicaSet and StatefulSet twins)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    try:
        selector = str(labels.selector_from_label_selector(spec.get("selector")))
    except labels.SelectorParseError as err:
        raise errors.bad_request(str(err)) from None
    meta = obj.get("metadata") or {}
    scale_status: Object = {"replicas": status.get("replicas") or 0}
    if selector:
        scale_status["selector"] = selector
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {k: meta[k] for k in SCALE_META if k in meta},
            "spec": {"replicas": spec["replicas"]} if spec.get("replicas") else {}, "status": scale_status}


def validate_scale(scale: Object) -> field.ErrorList:
    """autoscaling ValidateScale."""
    errs = validation.validate_object_meta(scale.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           field.Path("metadata"))
    replicas = (scale.get("spec") or {}).get("replicas") or 0
    if replicas < 0:
        errs.append(field.invalid(field.Path("spec", "replicas"), replicas, "must be greater than or equal to 0"))
    return errs


class ScaleREST:
    """GET, PUT and PATCH of <workloads>/scale."""

    def __init__(self, parent: Store):
        self.parent = parent
        self.info = ResourceInfo("autoscaling", "v1", parent.info.resource, "Scale", "", True, subresource="scale")

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return scale_of(await self.parent.get(ctx, name, options))

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        async def to_workload(ctx_: Context, old: Object | None) -> Object:
            return await self._scaled(ctx_, name, obj_info, copy.deepcopy(old or {}))

        validate = None
        if update_validation is not None:
            async def validate(ctx_: Context, obj: Object, old: Object) -> None:
                await update_validation(ctx_, scale_of(obj), scale_of(old))

        out, _ = await self.parent.update(ctx, name, UpdatedObjectInfo(name, to_workload), None, validate,
                                          False, options)
        return scale_of(out), False

    async def _scaled(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo, workload: Object) -> Object:
        """scaleUpdatedObjectInfo.UpdatedObject: workload -> old scale -> new scale -> new workload."""
        meta = workload["metadata"]
        old_scale = scale_of(workload)
        entries = to_subresource(meta.get("managedFields"))
        if entries:
            old_scale["metadata"]["managedFields"] = entries
        scale = await obj_info.updated_object(ctx, old_scale)
        errs = validate_scale(scale)
        if errs:
            raise errors.invalid("Scale", "autoscaling", name, errs)
        scale_meta = scale.get("metadata") or {}
        if scale_meta.get("uid") and scale_meta["uid"] != meta.get("uid"):
            raise errors.conflict(f"{self.info.resource}/scale", self.parent.info.group, name,
                                  f"Precondition failed: UID in precondition: {scale_meta['uid']}, "
                                  f"UID in object meta: {meta.get('uid')}")
        workload.setdefault("spec", {})["replicas"] = (scale.get("spec") or {}).get("replicas") or 0
        meta["resourceVersion"] = scale_meta.get("resourceVersion") or ""
        managed = to_parent(meta.get("managedFields"), scale_meta.get("managedFields"))
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)
        return workload
