"""The scale subresource (deployments, replicasets, statefulsets, replicationcontrollers and custom
resources): an autoscaling/v1 Scale read from and written to its parent. A write validates the Scale,
conflicts (409) when its uid is not the parent's, goes through the parent's own strategy (validation,
generation), and moves the ownership of the replicas between the Scale and the parent's managed fields
(pkg/registry/*/storage ScaleREST and scaleUpdatedObjectInfo)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..apimachinery import errors, field, validation
from ..apimachinery.managedfields.fieldpath import make_path
from .context import Context
from .rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from .scalefields import to_parent, to_subresource
from .store import Store
from .table import default_table_convertor

Object = dict[str, Any]
SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


@dataclass(frozen=True)
class ScaleView:
    """How one kind shows as a Scale."""

    replicas_path: tuple[str, ...]  # where the parent keeps the wanted replicas
    status: Callable[[Object], Object]  # the Scale's status (replicas, selector) from the parent
    parent_version: str  # the version whose managed fields own the replicas

    def scale_of(self, obj: Object) -> Object:
        meta = obj.get("metadata") or {}
        replicas = get_path(obj, self.replicas_path)
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {k: meta[k] for k in SCALE_META if k in meta},
                "spec": {"replicas": replicas} if replicas else {}, "status": self.status(obj)}


def get_path(obj: Object, path: tuple[str, ...]) -> Any:
    current: Any = obj
    for step in path:
        if not isinstance(current, dict):
            return None
        current = current.get(step)
    return current


def set_path(obj: Object, path: tuple[str, ...], value: Any) -> None:
    current = obj
    for step in path[:-1]:
        if not isinstance(current.get(step), dict):
            current[step] = {}
        current = current[step]
    current[path[-1]] = value


def validate_scale(scale: Object) -> field.ErrorList:
    """autoscaling ValidateScale."""
    errs = validation.validate_object_meta(scale.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           field.Path("metadata"))
    replicas = (scale.get("spec") or {}).get("replicas") or 0
    if replicas < 0:
        errs.append(field.invalid(field.Path("spec", "replicas"), replicas, "must be greater than or equal to 0"))
    return errs


class ScaleREST:
    """GET, PUT and PATCH of <parents>/scale."""

    def __init__(self, parent: Store, view: ScaleView):
        self.parent = parent
        self.view = view
        self.info = ResourceInfo("autoscaling", "v1", parent.info.resource, "Scale", "", parent.info.namespaced,
                                 subresource="scale")
        self.replicas = make_path(*view.replicas_path)
        self.table = default_table_convertor()  # a ScaleREST converts to tables (through its parent's store)

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return self.view.scale_of(await self.parent.get(ctx, name, options))

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        async def to_parent_object(ctx_: Context, old: Object | None) -> Object:
            if old is None:
                raise errors.not_found(self.parent.info.resource, self.parent.info.group, name)
            return await self._scaled(ctx_, name, obj_info, copy.deepcopy(old))

        validate = None
        if update_validation is not None:
            async def validate(ctx_: Context, obj: Object, old: Object) -> None:
                await update_validation(ctx_, self.view.scale_of(obj), self.view.scale_of(old))

        out, _ = await self.parent.update(ctx, name, UpdatedObjectInfo(name, to_parent_object), None, validate,
                                          False, options)
        return self.view.scale_of(out), False

    async def _scaled(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo, obj: Object) -> Object:
        """scaleUpdatedObjectInfo.UpdatedObject: parent -> old scale -> new scale -> new parent."""
        meta = obj["metadata"]
        old_scale = self.view.scale_of(obj)
        version = self.view.parent_version
        entries = to_subresource(meta.get("managedFields"), version, self.replicas)
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
        set_path(obj, self.view.replicas_path, (scale.get("spec") or {}).get("replicas") or 0)
        meta["resourceVersion"] = scale_meta.get("resourceVersion") or ""
        managed = to_parent(meta.get("managedFields"), scale_meta.get("managedFields"), version, self.replicas)
        if managed:
            meta["managedFields"] = managed
        else:
            meta.pop("managedFields", None)
        return obj
