"""Subresources that write one part of an object (status, finalize...): the same storage under a
strategy that takes only that part from the request and the rest from the stored object."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..apimachinery import field
from .context import Context
from .rest import UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from .store import Store
from .strategy import Strategy

Object = dict[str, Any]
# (new, old) -> the object to store: the old one with the subresource's part from the new one
Keep = Callable[[Object, Object], Object]


def keep_status(new: Object, old: Object) -> Object:
    """A status update changes status (and metadata), never spec (k8s *StatusStrategy)."""
    merged = copy.deepcopy({k: v for k, v in old.items() if k not in ("metadata", "status")})
    merged["metadata"] = new.get("metadata", {})
    if "status" in new:
        merged["status"] = new["status"]
    return merged


# What a status write never changes in metadata (metav1.ResetObjectMetaForStatus).
STATUS_META_FIELDS = ("labels", "annotations", "finalizers", "ownerReferences")


def keep_status_reset_meta(new: Object, old: Object) -> Object:
    """keep_status, and the metadata a status write may not change taken from the stored object."""
    merged = keep_status(new, old)
    meta, old_meta = merged["metadata"], old.get("metadata") or {}
    for key in STATUS_META_FIELDS:
        if key in old_meta:
            meta[key] = copy.deepcopy(old_meta[key])
        else:
            meta.pop(key, None)
    return merged


class SubresourceStrategy(Strategy):
    def __init__(self, parent: Strategy, keep: Keep):
        super().__init__(parent.info)
        self.parent = parent
        self.keep = keep
        self.name_validator = parent.name_validator
        self.error_group = parent.error_group
        self.tracks_generation = False
        self.has_status_subresource = False
        self.reset_fields = (("spec",),)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        merged = self.keep(obj, old)
        obj.clear()
        obj.update(merged)

    def default(self, obj: Object) -> None:
        self.parent.default(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return self.parent.validate(ctx, obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return self.parent.validate_update(ctx, obj, old)


class SubresourceREST:
    """PUT of one subresource (like namespaces/finalize); nothing else."""

    def __init__(self, parent: Store, subresource: str, keep: Keep, strategy: Strategy | None = None):
        """`strategy`: the subresource's own (a *StatusStrategy); by default the parent's, keeping `keep`."""
        self.info = replace(parent.info, subresource=subresource)
        strategy = strategy or SubresourceStrategy(parent.strategy, keep)
        self.store = Store(self.info, strategy, parent.storage, parent.key_prefix, parent.table)
        self.store.should_delete_during_update = parent.should_delete_during_update  # type: ignore[method-assign]
        self.strategy = strategy
        self.table = parent.table

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        # Subresources never create the object they belong to.
        return await self.store.update(ctx, name, obj_info, create_validation, update_validation, False, options)


class StatusREST(SubresourceREST):
    """GET, PUT and PATCH of a subresource (like */status)."""

    def __init__(self, parent: Store, subresource: str = "status", keep: Keep = keep_status,
                 strategy: Strategy | None = None):
        super().__init__(parent, subresource, keep, strategy)

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        return await self.store.get(ctx, name, options)
