"""What every apps/v1 workload strategy shares (pkg/registry/apps/*/strategy.go): defaults applied as
decoding applies them, status reset on create and kept on update, metadata.generation bumped by
spec changes, and the status strategy that writes status alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList
from ...registry.context import Context
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import Keep, StatusREST, SubresourceStrategy
from ..core.pod.strategy import decode_defaults

Object = dict[str, Any]
StatusCheck = Callable[[Object, Object], ErrorList]
NAME_WARNING = ("metadata.name: this is used in Pod names and hostnames, which can result in surprising "
                "behavior; a DNS label is recommended: [{}]")


def meta_update(obj: Object, old: Object) -> ErrorList:
    return validation.validate_object_meta_update(obj.get("metadata") or {}, old.get("metadata") or {},
                                                  field.Path("metadata"))


def updating(obj: Object) -> bool:
    """An update's object carries the stored resourceVersion; a new object has none."""
    return bool((obj.get("metadata") or {}).get("resourceVersion"))


class WorkloadStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True
    # Fields of status present even when zero (their JSON tags have no omitempty).
    status_zeros: tuple[str, ...] = ()
    # What a status write never changes besides spec (GetResetFields of the status strategy).
    status_reset_fields: tuple[tuple[str, ...], ...] = (("spec",),)
    warn_on_name = True

    def set_defaults(self, obj: Object) -> None:
        raise NotImplementedError

    def validate_create(self, obj: Object) -> ErrorList:
        raise NotImplementedError

    def validate_change(self, obj: Object, old: Object) -> ErrorList:
        raise NotImplementedError

    def default(self, obj: Object) -> None:
        decode_defaults(self.info.kind, self.set_defaults, obj)

    def fill_status(self, obj: Object) -> None:
        status = obj.get("status")
        status = status if isinstance(status, dict) else {}
        for key in self.status_zeros:
            if status.get(key) is None:
                status[key] = 0
        obj["status"] = status

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        self.fill_status(obj)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        obj["status"] = old.get("status", {})
        generation = old["metadata"].get("generation", 1)
        obj["metadata"]["generation"] = generation + 1 if self.bumps_generation(obj, old) else generation

    def bumps_generation(self, obj: Object, old: Object) -> bool:
        return obj.get("spec") != old.get("spec")

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        if updating(obj):
            return []  # validate_update gives everything the update is checked for
        errs = self.validate_create(obj)
        if not errs and self.warn_on_name:
            problems = validation.is_dns1123_label(obj["metadata"].get("name", ""))
            if problems:
                ctx.warnings.append(NAME_WARNING.format(" ".join(problems)))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return self.validate_change(obj, old)


class WorkloadStatusStrategy(SubresourceStrategy):
    """The status strategy: the rest from the stored object, only the status (and metadata) checked."""

    def __init__(self, parent: WorkloadStrategy, keep: Keep, check: StatusCheck):
        super().__init__(parent, keep)
        self.workload = parent
        self.check = check
        self.reset_fields = parent.status_reset_fields

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        self.workload.fill_status(obj)

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return self.check(obj, old)


def status_rest(store: Store, keep: Keep, check: StatusCheck) -> StatusREST:
    return StatusREST(store, strategy=WorkloadStatusStrategy(store.strategy, keep, check))  # type: ignore[arg-type]


def status(obj: Object) -> Object:
    value = obj.get("status")
    return value if isinstance(value, dict) else {}


def drop_terminating_replicas(new: Object, old: Object) -> None:
    """dropDisabledStatusFields: DeploymentReplicaSetTerminatingReplicas is alpha (off) in v1.34."""
    if "terminatingReplicas" not in status(old):
        status(new).pop("terminatingReplicas", None)
