"""The CertificateSigningRequest strategies (pkg/registry/certificates/certificates/strategy.go): the
main endpoint changes metadata only, /status the certificate (and non-approval conditions), /approval
the conditions. On create the server records who asked."""

from __future__ import annotations

import base64
import copy
from typing import Any

from ...apimachinery import field
from ...apimachinery.meta import now_rfc3339
from ...registry.context import Context
from ...registry.strategy import Strategy
from ...registry.subresource import SubresourceStrategy
from .validation import (
    APPROVED,
    DENIED,
    Options,
    conditions_of,
    decode_bytes,
    spec_of,
    status_of,
    validate_csr,
    validate_transitions,
)

Object = dict[str, Any]
# Set on the request context by PrepareForUpdate: validate_update then runs every check, in
# Kubernetes' order (object, transitions, metadata update), and validate adds nothing.
UPDATING = "certificates.k8s.io/updating"


def _any_name(name: str, prefix: bool) -> list[str]:
    """ValidateCertificateRequestName: "We don't care what you call your certificate requests." """
    return []


def record_requestor(ctx: Context, spec: Object) -> None:
    """The requesting user replaces whatever identity the client sent."""
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    spec.update(ctx.user.to_json())


def populate_timestamps(conditions: list[Object], old_conditions: list[Object]) -> None:
    """populateConditionTimestamps: missing times become now, or the old transition time of the
    same type and status."""
    now = now_rfc3339()
    for condition in conditions:
        condition["lastUpdateTime"] = condition.get("lastUpdateTime") or now
        if not condition.get("lastTransitionTime"):
            same = (c.get("lastTransitionTime") for c in old_conditions
                    if c.get("type") == condition.get("type") and c.get("status") == condition.get("status"))
            condition["lastTransitionTime"] = next((t for t in same if t), now)


def preserve_instances(conditions: list[Object], old_conditions: list[Object], ctype: str) -> None:
    """preserveConditionInstances: the old conditions of a type, if there are as many new ones."""
    new_at = [i for i, c in enumerate(conditions) if c.get("type") == ctype]
    old = [c for c in old_conditions if c.get("type") == ctype]
    if len(new_at) == len(old):
        for i, condition in zip(new_at, old, strict=True):
            conditions[i] = copy.deepcopy(condition)


def _merged(new: Object, old: Object, status: Object) -> Object:
    """The old object with the new metadata and the given status."""
    merged = copy.deepcopy({k: v for k, v in old.items() if k not in ("metadata", "status")})
    merged["metadata"] = new.get("metadata", {})
    merged["status"] = status
    return merged


def keep_status(new: Object, old: Object) -> Object:
    """csrStatusStrategy.PrepareForUpdate: spec and Approved/Denied conditions stay as they were."""
    status = copy.deepcopy(status_of(new))
    conditions = [c if isinstance(c, dict) else {} for c in status.get("conditions") or []]
    old_conditions = conditions_of(old)
    for ctype in (APPROVED, DENIED):
        preserve_instances(conditions, old_conditions, ctype)
    populate_timestamps(conditions, old_conditions)
    _set_conditions(status, conditions)
    return _merged(new, old, status)


def keep_approval(new: Object, old: Object) -> Object:
    """csrApprovalStrategy.PrepareForUpdate: only the conditions change."""
    conditions = copy.deepcopy(conditions_of(new))
    populate_timestamps(conditions, conditions_of(old))
    status = copy.deepcopy(status_of(old))
    _set_conditions(status, conditions)
    return _merged(new, old, status)


def _set_conditions(status: Object, conditions: list[Object]) -> None:
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)


def canonical_bytes(container: Object, key: str, field_name: str) -> None:
    """[]byte fields are stored as Go re-encodes them (canonical base64)."""
    data = decode_bytes(container.get(key), field_name)
    if data is not None:
        container[key] = base64.b64encode(data).decode()


class CSRStrategy(Strategy):
    has_status_subresource = True
    name_validator = staticmethod(_any_name)
    selectable_fields = ("spec.signerName",)
    reset_fields = (("spec",), ("status",))

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        if not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}
        record_requestor(ctx, obj["spec"])
        obj["status"] = {}

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        obj["spec"] = copy.deepcopy(old.get("spec"))
        obj["status"] = copy.deepcopy(old.get("status") or {})
        ctx.values[UPDATING] = True

    def validate_object(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_csr(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return [] if ctx.values.get(UPDATING) else self.validate_object(ctx, obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return self.validate_object(ctx, obj) + validate_transitions(obj, old, Options()) + \
            super().validate_update(ctx, obj, old)

    def canonicalize(self, obj: Object) -> None:
        canonical_bytes(spec_of(obj), "request", "CertificateSigningRequestSpec.spec.request")
        canonical_bytes(status_of(obj), "certificate", "CertificateSigningRequestStatus.status.certificate")

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["spec.signerName"] = spec_of(obj).get("signerName") or ""
        return fields


class CSRSubresourceStrategy(SubresourceStrategy):
    """/status or /approval: the parent's rules, with what this path may change."""

    def __init__(self, parent: CSRStrategy, keep: Any, options: Options, reset: tuple[tuple[str, ...], ...]):
        super().__init__(parent, keep)
        self.csr = parent
        self.options = options
        self.reset_fields = reset

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        ctx.values[UPDATING] = True

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return self.csr.validate_object(ctx, obj) + validate_transitions(obj, old, self.options) + \
            Strategy.validate_update(self, ctx, obj, old)

    def canonicalize(self, obj: Object) -> None:
        self.parent.canonicalize(obj)


def status_strategy(parent: CSRStrategy) -> CSRSubresourceStrategy:
    return CSRSubresourceStrategy(parent, keep_status, Options(certificate=True),
                                  (("spec",), ("status", "conditions")))


def approval_strategy(parent: CSRStrategy) -> CSRSubresourceStrategy:
    return CSRSubresourceStrategy(parent, keep_approval, Options(approval=True),
                                  (("spec",), ("status", "certificate")))
