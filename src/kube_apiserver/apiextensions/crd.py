"""customresourcedefinitions (apiextensions-apiserver pkg/registry/customresourcedefinition): the strategy,
the status subresource, and a delete that first lets the finalizer remove every custom resource."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ..apimachinery import errors, field
from ..apimachinery.meta import now_rfc3339
from ..lazyimport import lazy_import
from ..registry.context import Context
from ..registry.options import DeleteOptions
from ..registry.rest import ResourceInfo, ValidateObjectFunc
from ..registry.store import Store
from ..registry.strategy import Strategy
from ..registry.subresource import StatusREST, keep_status_reset_meta
from ..storage import interface as storage
from ..storage.factory import StorageFactory
from . import conditions

if TYPE_CHECKING:
    from . import validation
else:
    validation = lazy_import("kube_apiserver.apiextensions.validation")  # ~80 ms: on the first CRD write

Object = dict[str, Any]
GROUP = "apiextensions.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "customresourcedefinitions", "CustomResourceDefinition",
                    "customresourcedefinition", False, short_names=("crd", "crds"), categories=("api-extensions",))
KEY_PREFIX = "/registry/apiextensions.k8s.io/customresourcedefinitions"


def _add_stored_version(crd: Object) -> None:
    """The storage version is recorded in status.storedVersions as soon as objects may be stored in it."""
    stored = crd.setdefault("status", {}).setdefault("storedVersions", [])
    version = conditions.storage_version(crd)
    if version and version not in stored:
        stored.append(version)


def _empty_status() -> Object:
    return {"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}


class CRDStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True
    # ValidateCustomResourceDefinitionUpdate checks everything, ratcheted against the old object.
    update_validates_fully = True

    def default(self, obj: Object) -> None:
        validation.default_crd(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        obj["status"] = _empty_status()
        obj["metadata"]["generation"] = 1
        _add_stored_version(obj)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        obj["status"] = copy.deepcopy(old.get("status") or _empty_status())
        generation = old["metadata"].get("generation", 1)
        changed = obj.get("spec") != old.get("spec")
        obj["metadata"]["generation"] = generation + 1 if changed else generation
        _add_stored_version(obj)

    # validate_crd and validate_crd_update check the metadata too, as upstream's do.
    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return validation.validate_crd(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validation.validate_crd_update(obj, old)


class CRDStatusStrategy(CRDStrategy):
    tracks_generation = False
    has_status_subresource = False
    reset_fields = (("spec",),)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        merged = keep_status_reset_meta(obj, old)
        obj.clear()
        obj.update(merged)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validation.validate_crd_status_update(obj, old)


class CRDStore(Store):
    def __init__(self, storage_: StorageFactory):
        super().__init__(INFO, CRDStrategy(INFO), storage_, KEY_PREFIX)

    async def delete(self, ctx: Context, name: str, delete_validation: ValidateObjectFunc | None = None,
                     options: DeleteOptions | None = None) -> tuple[Object, bool]:
        """The first delete only marks the CRD: Terminating, with the cleanup finalizer, so that its custom
        resources go first (REST.Delete)."""
        options = options or DeleteOptions()
        existing = await self.get(ctx, name)
        meta = existing["metadata"]
        if options.preconditions_uid and options.preconditions_uid != meta.get("uid"):
            raise errors.conflict(INFO.resource, GROUP, name, f"precondition failed: UID in precondition: "
                                  f"{options.preconditions_uid}, UID in object meta: {meta.get('uid')}")
        if meta.get("deletionTimestamp"):
            return await super().delete(ctx, name, delete_validation, options)
        preconditions = storage.Preconditions(meta.get("uid"), options.preconditions_resource_version)

        async def mark(current: Object) -> Object:
            if delete_validation is not None:
                await delete_validation(ctx, current)
            current_meta = current["metadata"]
            current_meta.setdefault("deletionTimestamp", now_rfc3339())
            current_meta["deletionGracePeriodSeconds"] = 0
            finalizers = current_meta.setdefault("finalizers", [])
            if conditions.CLEANUP_FINALIZER not in finalizers:
                finalizers.append(conditions.CLEANUP_FINALIZER)
            conditions.set_condition(current, conditions.TERMINATING, "True", "InstanceDeletionPending",
                                     "CustomResourceDefinition marked for deletion; CustomResource deletion will "
                                     "begin soon")
            return current

        if ctx.dry_run:
            return await mark(copy.deepcopy(existing)), False
        try:
            return await self.storage.guaranteed_update(self.key(ctx, name), mark, preconditions), False
        except storage.StorageError as err:
            raise self.interpret(err, name) from None


def new_storage(storage_: StorageFactory) -> dict[str, Any]:
    store = CRDStore(storage_)
    status = StatusREST(store, strategy=CRDStatusStrategy(INFO))
    return {"customresourcedefinitions": store, "customresourcedefinitions/status": status}
