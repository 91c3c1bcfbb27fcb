"""The Service store (pkg/registry/core/service/storage): cluster IPs and node ports are allocated
before a write (BeginCreate/BeginUpdate), kept when it succeeds and released when it fails; a deleted
Service releases them and takes its Endpoints with it (afterDelete)."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import errors
from ....registry.context import Context
from ....registry.options import DeleteOptions
from ....registry.rest import UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from ....registry.store import GENERATE_NAME_RETRIES, Store
from ....registry.strategy import generate_name
from .alloc import Allocators, Transaction
from .prepare import normalize_cluster_ips, patch_allocated_values

Object = dict[str, Any]


class ServiceStore(Store):
    def __init__(self, *args: Any, allocators: Allocators, endpoints: Store | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.allocators = allocators
        self.endpoints = endpoints

    async def _begin_create(self, ctx: Context, obj: Object) -> Transaction:
        meta = obj.setdefault("metadata", {})
        meta["namespace"] = meta.get("namespace") or ctx.namespace
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(meta["generateName"], meta["namespace"])
        normalize_cluster_ips(obj, None)
        return await self.allocators.allocate_create(obj, ctx.dry_run)

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        """A name generated from generateName that exists already is generated again, from the request's
        object and with new allocations (createWithGenerateNameRetry); a name the client gave is kept."""
        meta = obj.get("metadata") or {}
        retries = GENERATE_NAME_RETRIES - 1 if not meta.get("name") and meta.get("generateName") else 0
        requested = copy.deepcopy(obj) if retries else obj
        while True:
            txn = await self._begin_create(ctx, obj)
            try:
                out = await super().create(ctx, obj, create_validation, options)
            except errors.StatusError as err:
                await txn.revert()
                if err.reason != "AlreadyExists" or not retries:
                    raise
                retries -= 1
                obj = copy.deepcopy(requested)
                continue
            except BaseException:
                await txn.revert()
                raise
            await txn.commit()
            return out

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        pending: list[Transaction] = []

        async def allocate(_ctx: Context, obj: Object, old: Object | None) -> Object:
            while pending:  # an earlier attempt of a retried update
                await pending.pop().revert()
            if old is None:
                pending.append(await self._begin_create(_ctx, obj))
                return obj
            obj.setdefault("metadata", {}).setdefault("namespace", old["metadata"].get("namespace", ""))
            patch_allocated_values(obj, old)
            normalize_cluster_ips(obj, old)
            pending.append(await self.allocators.allocate_update(obj, old, _ctx.dry_run))
            return obj

        info = UpdatedObjectInfo(obj_info.name, obj_info.transform, [*obj_info.admission, allocate])
        try:
            out = await super().update(ctx, name, info, create_validation, update_validation, force_allow_create,
                                       options)
        except BaseException:
            for txn in pending:
                await txn.revert()
            raise
        for txn in pending:
            await txn.commit()
        return out

    async def _delete_now(self, ctx: Context, key: str, name: str, existing: Object,
                          preconditions: Any = None) -> Object:
        out = await super()._delete_now(ctx, key, name, existing, preconditions)
        await self.after_delete(ctx, existing)
        return out

    async def after_delete(self, ctx: Context, svc: Object) -> None:
        if self.endpoints is not None:
            try:
                await self.endpoints.delete(Context(svc["metadata"].get("namespace", ""), ctx.user),
                                            svc["metadata"]["name"], None, DeleteOptions())
            except errors.StatusError as err:
                if err.code != 404:
                    raise
        await self.allocators.release_all(svc)
