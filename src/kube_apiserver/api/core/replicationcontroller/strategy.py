"""ReplicationControllers (pkg/registry/core/replicationcontroller): SetDefaults_ReplicationController,
ValidateReplicationController with the pod template machinery of podspec, and the status strategy."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ....apimachinery.meta import spec_of
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ..gotypes import REPLICATION_CONTROLLER, check_decodable
from ..pod.strategy import decode_defaults
from ..podspec import PodValidationOptions, default_pod_template_spec, validate_pod_template_spec

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "replicationcontrollers", "ReplicationController", "replicationcontroller", True,
                    short_names=("rc",), categories=("all",))
SPEC = Path("spec")
STATUS = Path("status")


def set_defaults(obj: Object) -> None:
    """Selector and labels from the template's labels; one replica."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_template_spec(template)
        labels = (template.get("metadata") or {}).get("labels")
        if labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.setdefault("metadata", {})
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def validate_template_for_rc(template: Any, selector: dict[str, str], path: Path) -> ErrorList:
    """ValidatePodTemplateSpecForRC."""
    if not isinstance(template, dict):
        return [field.required(path, "")]
    labels = (template.get("metadata") or {}).get("labels") or {}
    errs: ErrorList = []
    if selector and not _matches(selector, labels):
        errs.append(field.invalid(path.child("metadata", "labels"), labels, "`selector` does not match template "
                                                                             "`labels`"))
    errs += validate_pod_template_spec(template, path, PodValidationOptions())
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    policy = spec.get("restartPolicy") or ""
    if policy != "Always":
        errs.append(field.not_supported(path.child("spec", "restartPolicy"), policy, ("Always",)))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(field.forbidden(path.child("spec", "activeDeadlineSeconds"),
                                    "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs


def validate_spec(spec: Object) -> ErrorList:
    """ValidateReplicationControllerSpec."""
    errs = validation.validate_nonnegative_field(spec.get("minReadySeconds") or 0, SPEC.child("minReadySeconds"))
    selector = spec.get("selector") or {}
    if not selector:
        errs.append(field.required(SPEC.child("selector"), ""))
    errs += [e.with_origin("minimum") for e in
             validation.validate_nonnegative_field(spec.get("replicas") or 0, SPEC.child("replicas"))]
    return errs + validate_template_for_rc(spec.get("template"), selector, SPEC.child("template"))


def validate_status(status: Object) -> ErrorList:
    """ValidateReplicationControllerStatus."""
    counts = {key: status.get(key) or 0 for key in ("replicas", "fullyLabeledReplicas", "readyReplicas",
                                                     "availableReplicas", "observedGeneration")}
    errs = [e for key, value in counts.items() for e in validation.validate_nonnegative_field(value, STATUS.child(key))]
    for key in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[key] > counts["replicas"]:
            errs.append(field.invalid(STATUS.child(key), counts[key], "cannot be greater than status.replicas"))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(field.invalid(STATUS.child("availableReplicas"), counts["availableReplicas"],
                                  "cannot be greater than readyReplicas"))
    return errs


class ReplicationControllerStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True
    orphan_by_default = True  # core/v1's DefaultGarbageCollectionPolicy, kept for compatibility
    selectable_fields = ("status.replicas",)

    def default(self, obj: Object) -> None:
        check_decodable("ReplicationController", obj, REPLICATION_CONTROLLER)
        decode_defaults("ReplicationController", set_defaults, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {"replicas": 0}

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        errs = super().validate(ctx, obj)
        return errs + validate_spec(spec_of(obj))

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["status.replicas"] = str((obj.get("status") or {}).get("replicas") or 0)
        return fields


class ReplicationControllerStatusStrategy(SubresourceStrategy):
    """A status write keeps the stored spec; ValidateReplicationControllerStatusUpdate."""

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_status(obj.get("status") or {})


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=ReplicationControllerStatusStrategy(store.strategy, keep_status))
