"""The resource.k8s.io strategies (pkg/registry/resource/*/strategy.go, v1.34): defaults, what a
write may change, generation on spec changes, and which validation runs when."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from ...registry.context import Context
from ...registry.strategy import Strategy
from ...registry.subresource import SubresourceStrategy, keep_status_reset_meta
from ..node.resources import is_extended
from . import admin, claim_status, defaults, drop
from .claim_validation import (
    validate_claim,
    validate_claim_update,
    validate_template,
    validate_template_update,
)
from .common import (
    CONFIG_MAX,
    as_dict,
    as_list,
    validate_device_configuration,
    validate_selectors,
    validate_slice,
)
from .slice_validation import validate_slice_object

Object = dict[str, Any]
NODE_NAME, DRIVER = "spec.nodeName", "spec.driver"
# Set by ResourceSlice's PrepareForUpdate: its spec is then validated once, with the old one.
UPDATING_SLICE = "resource.k8s.io/updating-slice"


def claim_spec_of_claim(obj: Object) -> Object:
    return as_dict(obj.get("spec"))


def claim_spec_of_template(obj: Object) -> Object:
    return as_dict(as_dict(obj.get("spec")).get("spec"))


# ---- DeviceClass ----

def validate_device_class(obj: Object) -> ErrorList:
    spec, path = as_dict(obj.get("spec")), Path("spec")
    errs = validate_selectors(as_list(spec.get("selectors")), path.child("selectors"))
    errs += validate_slice(as_list(spec.get("config")), CONFIG_MAX,
                           lambda c, p: validate_device_configuration(as_dict(c), p), path.child("config"))
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended(str(name)):
        errs.append(field.invalid(path.child("extendedResourceName"), name, "must be a valid extended resource name"))
    return errs


class DeviceClassStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: Object) -> None:
        obj.setdefault("spec", {})  # a struct: always printed

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        drop.drop_device_class(obj, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        drop.drop_device_class(obj, old)  # before the spec is compared for the generation
        super().prepare_for_update(ctx, obj, old)

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return super().validate(ctx, obj) + validate_device_class(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        # The spec is checked again, its selectors as stored expressions when unchanged.
        return super().validate_update(ctx, obj, old) + validate_device_class(obj)


# ---- ResourceClaim ----

class ResourceClaimStrategy(Strategy):
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        defaults.default_claim(obj, self.info.kind)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {}  # never set by the creator; a struct, so always printed
        as_dict(obj.setdefault("spec", {})).setdefault("devices", {})
        drop.drop_claim(obj, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        drop.drop_claim(obj, old)

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        errs = admin.spec_errors(ctx, claim_spec_of_claim(obj))
        return errs + super().validate(ctx, obj) + validate_claim(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        # No admin access check: the spec cannot change.
        return super().validate_update(ctx, obj, old) + validate_claim_update(obj, old)


class ResourceClaimStatusStrategy(SubresourceStrategy):
    """/status: status (with drivers' device status) only; the spec and most metadata are kept."""

    def __init__(self, parent: ResourceClaimStrategy):
        super().__init__(parent, keep_status_reset_meta)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        drop.drop_deallocated_devices(obj, old)
        drop.drop_claim(obj, old)

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return Strategy.validate(self, ctx, obj)  # the metadata only

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        errs = admin.status_errors(ctx, obj, old)
        return errs + Strategy.validate_update(self, ctx, obj, old) + claim_status.validate_status_update(obj, old)


# ---- ResourceClaimTemplate ----

class ResourceClaimTemplateStrategy(Strategy):
    def default(self, obj: Object) -> None:
        defaults.default_template(obj, self.info.kind)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        spec = as_dict(obj.setdefault("spec", {}))
        as_dict(spec.setdefault("spec", {})).setdefault("devices", {})
        drop.drop_claim_spec(claim_spec_of_template(obj), None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        drop.drop_claim_spec(claim_spec_of_template(obj), claim_spec_of_template(old))

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        errs = admin.spec_errors(ctx, claim_spec_of_template(obj))
        return errs + super().validate(ctx, obj) + validate_template(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return super().validate_update(ctx, obj, old) + validate_template_update(obj, old)


# ---- ResourceSlice ----

class ResourceSliceStrategy(Strategy):
    tracks_generation = True
    selectable_fields = (NODE_NAME, DRIVER)

    def default(self, obj: Object) -> None:
        defaults.default_slice(obj, self.info.kind)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        drop.drop_slice(obj, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)  # the generation counts the spec as sent
        drop.drop_slice(obj, old)
        ctx.values[UPDATING_SLICE] = True

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        errs = super().validate(ctx, obj)
        return errs if ctx.values.get(UPDATING_SLICE) else errs + validate_slice_object(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        # ValidateResourceSliceUpdate alone: it re-checks the whole spec with the immutable fields.
        return super().validate_update(ctx, obj, old) + validate_slice_object(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        spec = as_dict(obj.get("spec"))
        fields[NODE_NAME] = spec.get("nodeName") or ""
        fields[DRIVER] = spec.get("driver") or ""
        return fields
