"""The PersistentVolumeClaim strategy and its status strategy
(pkg/registry/core/persistentvolumeclaim/strategy.go)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....apimachinery.meta import spec_of
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ..pod.strategy import decode_defaults
from ..podspec.defaults import default_resource_list
from ..volumetypes import check_kind
from .datasource import enforce_backwards_compatibility, normalize
from .validation import validate_claim, validate_claim_status_update, validate_claim_update

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", "persistentvolumeclaim", True,
                    short_names=("pvc",))


def default_claim_spec(spec: Object) -> None:
    """SetDefaults_PersistentVolumeClaimSpec (volume mode Filesystem) and the quantities' defaults."""
    resources = spec.get("resources")
    if isinstance(resources, dict):
        default_resource_list(resources.get("limits"))
        default_resource_list(resources.get("requests"))
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"


def default_claim(obj: Object) -> None:
    """SetObjectDefaults_PersistentVolumeClaim: phase Pending."""
    spec, status = obj.setdefault("spec", {}), obj.setdefault("status", {})
    if isinstance(spec, dict):
        default_claim_spec(spec)
    if isinstance(status, dict):
        default_resource_list(status.get("capacity"))
        default_resource_list(status.get("allocatedResources"))
        if not status.get("phase"):
            status["phase"] = "Pending"


class PersistentVolumeClaimStrategy(Strategy):
    has_status_subresource = True
    selectable_fields = ("name",)

    def default(self, obj: Object) -> None:
        check_kind("PersistentVolumeClaim", obj)
        decode_defaults("PersistentVolumeClaim", default_claim, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {"phase": "Pending"}  # the empty status, as read back with its defaults
        enforce_backwards_compatibility(spec_of(obj), None)
        normalize(spec_of(obj))

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        enforce_backwards_compatibility(spec_of(obj), spec_of(old))
        normalize(spec_of(obj))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_claim(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return super().validate_update(ctx, obj, old) + validate_claim_update(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["name"] = fields["metadata.name"]  # "a bug, but supported for backward compatibility"
        return fields


class PersistentVolumeClaimStatusStrategy(SubresourceStrategy):
    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_claim_status_update(obj)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=PersistentVolumeClaimStatusStrategy(store.strategy))
