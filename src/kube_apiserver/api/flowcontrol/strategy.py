"""What FlowSchemas and PriorityLevelConfigurations share: status set only through /status, and
metadata.generation moved when the spec changes semantically (defaulted, typed comparison)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...registry.context import Context
from ...registry.strategy import Strategy
from . import structs
from .common import as_dict

Object = dict[str, Any]


class FlowControlStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True
    # The spec as its Go struct, whose equality decides whether generation moves.
    spec_struct: Callable[[Object], Any]

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {}

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        generation = old["metadata"].get("generation", 1)
        super().prepare_for_update(ctx, obj, old)
        changed = not structs.semantic_equal(self.spec_struct(as_dict(obj.get("spec"))),
                                             self.spec_struct(as_dict(old.get("spec"))))
        obj["metadata"]["generation"] = generation + 1 if changed else generation
