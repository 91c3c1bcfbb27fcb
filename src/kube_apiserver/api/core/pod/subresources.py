"""pods/status, pods/ephemeralcontainers and pods/resize: each writes one part of a pod
(podStatusStrategy, podEphemeralContainersStrategy, podResizeStrategy)."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import field
from ....registry.context import Context
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import Keep, StatusREST, SubresourceREST, SubresourceStrategy
from .resize import keep_resize, validate_resize
from .status import keep_pod_status, validate_ephemeral_update, validate_status_update
from .subresources_meta import reset_meta_for_status

Object = dict[str, Any]
def keep_ephemeral_containers(new: Object, old: Object) -> Object:
    """dropNonEphemeralContainerUpdates."""
    merged = copy.deepcopy({k: v for k, v in old.items() if k != "metadata"})
    merged["metadata"] = reset_meta_for_status(new, old)
    spec = merged.setdefault("spec", {})
    ephemeral = (new.get("spec") or {}).get("ephemeralContainers")
    if ephemeral is None:
        spec.pop("ephemeralContainers", None)
    else:
        spec["ephemeralContainers"] = ephemeral
    return merged


class PodSubresourceStrategy(SubresourceStrategy):
    """Validates with its own update rules only; spec changes bump metadata.generation."""

    def __init__(self, parent: Strategy, keep: Keep, check: Any, tracks_generation: bool):
        super().__init__(parent, keep)
        self.check = check
        self.bumps_generation = tracks_generation
        self.reset_fields = (("status",),) if tracks_generation else (("spec",),)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        if self.bumps_generation and obj.get("spec") != old.get("spec"):
            obj["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + self.check(obj, old)


def _install(rest: SubresourceREST, strategy: PodSubresourceStrategy) -> SubresourceREST:
    rest.strategy = rest.store.strategy = strategy
    return rest


def status_rest(store: Store) -> StatusREST:
    strategy = PodSubresourceStrategy(store.strategy, keep_pod_status, validate_status_update, False)
    rest = StatusREST(store)
    _install(rest, strategy)
    return rest


def ephemeral_containers_rest(store: Store) -> StatusREST:
    rest = StatusREST(store, "ephemeralcontainers", keep_ephemeral_containers)
    _install(rest, PodSubresourceStrategy(store.strategy, keep_ephemeral_containers, validate_ephemeral_update, True))
    return rest


def resize_rest(store: Store) -> StatusREST:
    rest = StatusREST(store, "resize", keep_resize)
    _install(rest, PodSubresourceStrategy(store.strategy, keep_resize, validate_resize, True))
    return rest
