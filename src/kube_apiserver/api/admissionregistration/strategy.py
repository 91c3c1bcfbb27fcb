"""The strategies of the four resources (pkg/registry/admissionregistration/*/strategy.go): generation
moves when the webhooks or the spec change; a policy's status is written only through /status; an
update is validated against what the stored object already met, not against the rules of creation."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.strategy import Strategy
from ...registry.subresource import SubresourceStrategy, keep_status_reset_meta
from .defaults import (
    as_dict,
    default_binding,
    default_policy,
    default_webhook_configuration,
    stored_webhook_configuration,
)
from .policy_validation import (
    policy_match_conditions_unchanged,
    validate_binding_spec,
    validate_policy_spec,
    validate_policy_status,
)
from .validation import Options, update_options, validate_webhook_configuration

Object = dict[str, Any]
# Set by prepare_for_update: validate() then leaves the checks to validate_update, whose options differ.
UPDATING = "admissionregistration.k8s.io/updating"


class AdmissionRegistrationStrategy(Strategy):
    tracks_generation = True
    allow_unconditional_update = False

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        ctx.values[UPDATING] = True

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        return errs if ctx.values.get(UPDATING) else errs + self.validate_create(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return super().validate_update(ctx, obj, old) + self.validate_changed(obj, old)

    def validate_create(self, obj: Object) -> field.ErrorList:
        return []

    def validate_changed(self, obj: Object, old: Object) -> field.ErrorList:
        return self.validate_create(obj)


class WebhookConfigurationStrategy(AdmissionRegistrationStrategy):
    def __init__(self, info: Any, mutating: bool):
        super().__init__(info)
        self.mutating = mutating

    def default(self, obj: Object) -> None:
        default_webhook_configuration(obj, self.mutating)

    def validate_create(self, obj: Object) -> field.ErrorList:
        return validate_webhook_configuration(obj, Options(), self.mutating)

    def validate_changed(self, obj: Object, old: Object) -> field.ErrorList:
        return validate_webhook_configuration(obj, update_options(obj, old), self.mutating)

    def canonicalize(self, obj: Object) -> None:
        stored_webhook_configuration(obj)


class PolicyStrategy(AdmissionRegistrationStrategy):
    has_status_subresource = True

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {}

    def default(self, obj: Object) -> None:
        default_policy(obj)

    def validate_create(self, obj: Object) -> field.ErrorList:
        return validate_policy_spec(_name(obj), as_dict(obj.get("spec")), False)

    def validate_changed(self, obj: Object, old: Object) -> field.ErrorList:
        unchanged = policy_match_conditions_unchanged(obj, old)
        return validate_policy_spec(_name(obj), as_dict(obj.get("spec")), unchanged)


def keep_policy_status(new: Object, old: Object) -> Object:
    """validatingAdmissionPolicyStatusStrategy.PrepareForUpdate: the spec stays; metadata as a status write."""
    merged = keep_status_reset_meta(new, old)
    merged["spec"] = copy.deepcopy(old.get("spec"))
    return merged


class PolicyStatusStrategy(SubresourceStrategy):
    """/status: only the status changes, no generation move; only the status is validated."""

    def __init__(self, parent: PolicyStrategy):
        super().__init__(parent, keep_policy_status)
        self.allow_unconditional_update = False
        self.reset_fields = (("spec",), ("metadata",))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_policy_status(as_dict(obj.get("status")))


class BindingStrategy(AdmissionRegistrationStrategy):
    def default(self, obj: Object) -> None:
        default_binding(obj)

    def validate_create(self, obj: Object) -> field.ErrorList:
        return validate_binding_spec(as_dict(obj.get("spec")))


def _name(obj: Object) -> str:
    return as_dict(obj.get("metadata")).get("name") or ""
