"""horizontalpodautoscalers and horizontalpodautoscalers/status (pkg/registry/autoscaling/
horizontalpodautoscaler), stored as autoscaling/v2. The API only: scaling workloads on their metrics is
the horizontal-pod-autoscaler controller's work (kube-controller-manager), not this server's."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ...storage.factory import StorageFactory
from .conversion import normalize_v2_status
from .defaults import canonicalize_v2_quantities, decode, default_v2
from .table import table
from .validation import options_for, validate_hpa, validate_hpa_update, validate_status_update

Object = dict[str, Any]
GROUP = "autoscaling"
RESOURCE = "horizontalpodautoscalers"
INFO = ResourceInfo(GROUP, "v2", RESOURCE, "HorizontalPodAutoscaler", "horizontalpodautoscaler", True,
                    short_names=("hpa",), categories=("all",))


def drop_tolerance(hpa: Object, old: Object | None) -> None:
    """dropDisabledFields: HPAConfigurableTolerance is alpha (off) in v1.34; a tolerance already in use stays."""
    if old is not None and _uses_tolerance(old):
        return
    behavior = (hpa.get("spec") or {}).get("behavior")
    for direction in ("scaleUp", "scaleDown"):
        rules = behavior.get(direction) if isinstance(behavior, dict) else None
        if isinstance(rules, dict):
            rules.pop("tolerance", None)


def _uses_tolerance(hpa: Object) -> bool:
    behavior = (hpa.get("spec") or {}).get("behavior")
    return isinstance(behavior, dict) and any(isinstance(behavior.get(d), dict) and
                                              behavior[d].get("tolerance") is not None
                                              for d in ("scaleUp", "scaleDown"))


def _defaults(hpa: Object) -> None:
    canonicalize_v2_quantities(hpa)
    default_v2(hpa)


class HorizontalPodAutoscalerStrategy(Strategy):
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        decode("v2", _defaults, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        normalize_v2_status(obj)
        drop_tolerance(obj, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        drop_tolerance(obj, old)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        # On update the strategy's ValidateUpdate alone runs (validate_update below).
        if (obj.get("metadata") or {}).get("resourceVersion"):
            return []
        return validate_hpa(obj, options_for(obj, None))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validate_hpa_update(obj, old, options_for(obj, old))


class HorizontalPodAutoscalerStatusStrategy(SubresourceStrategy):
    """autoscalerStatusStrategy: the spec from the stored object, only the status validated."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        normalize_v2_status(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validate_status_update(obj, old)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=HorizontalPodAutoscalerStatusStrategy(store.strategy))


def new_store(storage: StorageFactory) -> Store:
    return Store(INFO, HorizontalPodAutoscalerStrategy(INFO), storage, f"/registry/{RESOURCE}", table())
