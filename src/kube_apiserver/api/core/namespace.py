"""namespaces, namespaces/status, namespaces/finalize (pkg/registry/core/namespace).

Deleting a namespace first marks it Terminating; it is removed once its spec.finalizers are empty
(the namespace controller empties it and calls /finalize)."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import errors, field, validation
from ...apimachinery.meta import now_rfc3339
from ...registry.context import Context
from ...registry.options import DeleteOptions
from ...registry.rest import ResourceInfo, TableColumn, ValidateObjectFunc
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceREST
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage import interface as storage
from ...storage.factory import StorageFactory

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "namespaces", "Namespace", "namespace", False, short_names=("ns",))
FINALIZER_KUBERNETES = "kubernetes"
NAME_LABEL = "kubernetes.io/metadata.name"
STILL_FINALIZING = ("The system is ensuring all content is removed from this namespace.  Upon completion, this "
                    "namespace will automatically be purged by the system.")


def set_defaults(obj: Object) -> None:
    """SetDefaults_Namespace: the immutable name label every namespace carries."""
    meta = obj.setdefault("metadata", {})
    if meta.get("name"):
        labels = meta.get("labels") or {}
        labels[NAME_LABEL] = meta["name"]
        meta["labels"] = labels


class NamespaceStrategy(Strategy):
    name_validator = staticmethod(validation.name_is_dns_label)
    selectable_fields = ("status.phase",)
    reset_fields = (("status",),)

    def default(self, obj: Object) -> None:
        set_defaults(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {"phase": "Active"}
        spec = obj.get("spec") or {}
        finalizers = list(spec.get("finalizers") or [])
        if FINALIZER_KUBERNETES not in finalizers:
            finalizers.append(FINALIZER_KUBERNETES)
        spec["finalizers"] = finalizers
        obj["spec"] = spec
        set_defaults(obj)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        obj["spec"] = copy.deepcopy(old.get("spec") or {})
        obj["status"] = copy.deepcopy(old.get("status") or {})
        set_defaults(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        for i, finalizer in enumerate((obj.get("spec") or {}).get("finalizers") or []):
            for msg in validation.is_qualified_name(finalizer):
                errs.append(field.invalid(field.Path("spec", "finalizers").index(i), finalizer, msg))
        return errs

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["status.phase"] = (obj.get("status") or {}).get("phase", "")
        return fields


def keep_finalizers(new: Object, old: Object) -> Object:
    """namespaces/finalize changes spec.finalizers only."""
    merged = copy.deepcopy(old)
    merged["metadata"] = new.get("metadata", {})
    merged.setdefault("spec", {})["finalizers"] = list((new.get("spec") or {}).get("finalizers") or [])
    return merged


class NamespaceREST(Store):
    # Namespaces have no deletecollection in Kubernetes (its namespace REST does not expose it).
    delete_collection = None  # type: ignore[assignment]
    def should_delete_during_update(self, obj: Object) -> bool:
        return not (obj.get("spec") or {}).get("finalizers") and super().should_delete_during_update(obj)

    async def delete(self, ctx: Context, name: str, delete_validation: ValidateObjectFunc | None = None,
                     options: DeleteOptions | None = None) -> tuple[Object, bool]:
        options = options or DeleteOptions()
        existing = await self.get(ctx, name)
        preconditions = storage.Preconditions(options.preconditions_uid, options.preconditions_resource_version)
        try:
            preconditions.check(self.key(ctx, name), existing)
        except storage.ConflictError as err:
            raise self.interpret(err, name) from None
        if delete_validation is not None:
            await delete_validation(ctx, existing)
        if not existing["metadata"].get("deletionTimestamp"):
            return await self._terminate(ctx, name, existing, preconditions), False
        if (existing.get("spec") or {}).get("finalizers"):
            raise errors.conflict("namespaces", "", name, STILL_FINALIZING)
        return await super().delete(ctx, name, None, options)

    async def _terminate(self, ctx: Context, name: str, existing: Object,
                         preconditions: storage.Preconditions) -> Object:
        if ctx.dry_run:
            existing["metadata"]["deletionTimestamp"] = now_rfc3339()
            existing["metadata"]["deletionGracePeriodSeconds"] = 0
            existing.setdefault("status", {})["phase"] = "Terminating"
            return existing

        async def terminate(current: Object) -> Object:
            current["metadata"].setdefault("deletionTimestamp", now_rfc3339())
            current["metadata"].setdefault("deletionGracePeriodSeconds", 0)
            current.setdefault("status", {})["phase"] = "Terminating"
            return current

        try:
            return await self.storage.guaranteed_update(self.key(ctx, name), terminate, preconditions)
        except storage.StorageError as err:
            raise self.interpret(err, name) from None


TABLE = TableConvertor((NAME, TableColumn("Status", "string", "", "The status of the namespace"), AGE),
                       lambda o: [name(o), (o.get("status") or {}).get("phase", ""), age(o)])


def new_rest(storage_: StorageFactory) -> dict[str, Any]:
    store = NamespaceREST(INFO, NamespaceStrategy(INFO), storage_, "/registry/namespaces", TABLE,
                          return_deleted_object=False)
    return {"namespaces": store,
            "namespaces/status": StatusREST(store),
            "namespaces/finalize": SubresourceREST(store, "finalize", keep_finalizers)}
