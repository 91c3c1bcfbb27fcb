"""The status subresource both kinds share (flowSchemaStatusStrategy, priorityLevelConfigurationStatusStrategy):
only the status comes from the request; the spec and the metadata, but for managedFields, stay as stored;
only the status is validated."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy
from .common import as_dict, validate_status

Object = dict[str, Any]


def keep_status_only(new: Object, old: Object) -> Object:
    """PrepareForUpdate of the status strategies."""
    merged = copy.deepcopy({k: v for k, v in old.items() if k != "status"})
    meta = merged.setdefault("metadata", {})
    managed = as_dict(new.get("metadata")).get("managedFields")
    if managed is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = managed
    merged["status"] = new.get("status") if isinstance(new.get("status"), dict) else {}
    return merged


class FlowControlStatusStrategy(SubresourceStrategy):
    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status_only)
        self.allow_unconditional_update = parent.allow_unconditional_update
        self.reset_fields = (("spec",), ("metadata",))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_status(as_dict(obj.get("status")),
                                                                              field.Path("status"))


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=FlowControlStatusStrategy(store.strategy))
