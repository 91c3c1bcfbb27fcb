"""limitranges (pkg/registry/core/limitrange): per-namespace bounds and defaults of the resources of pods,
containers and claims, which the LimitRanger admission plugin applies."""

from __future__ import annotations

from typing import Any

from ....apimachinery.field import ErrorList
from ....apimachinery.meta import new_uid
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....storage.factory import StorageFactory
from ..pod.strategy import decode_defaults
from ..podspec.defaults import default_resource_list
from .validation import validate_limit_range

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "limitranges", "LimitRange", "limitrange", True, short_names=("limits",))
LISTS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _fill(item: Object, key: str, source: dict[str, Any]) -> None:
    """Sets in item[key] what source has and item[key] lacks (no empty list is added)."""
    target = dict(item.get(key) or {})
    for name, value in source.items():
        target.setdefault(name, value)
    if target:
        item[key] = dict(sorted(target.items()))


def default_item(item: Object) -> None:
    """SetDefaults_LimitRangeItem: a container's default limit is its max, its default request its default
    limit, else its min; then SetDefaults_ResourceList on every list."""
    if not isinstance(item, dict):
        return
    if item.get("type") == "Container":
        _fill(item, "default", item.get("max") or {})
        _fill(item, "defaultRequest", item.get("default") or {})
        _fill(item, "defaultRequest", item.get("min") or {})
    for key in LISTS:
        default_resource_list(item.get(key))


def set_defaults(obj: Object) -> None:
    spec = obj.setdefault("spec", {})
    for item in spec.get("limits") or [] if isinstance(spec, dict) else []:
        default_item(item)


class LimitRangeStrategy(Strategy):
    allow_create_on_update = True

    def default(self, obj: Object) -> None:
        decode_defaults(INFO.kind, set_defaults, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        if not obj["metadata"].get("name"):
            obj["metadata"]["name"] = new_uid("limitranges", ctx.namespace, "")

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return super().validate(ctx, obj) + validate_limit_range(obj)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"limitranges": Store(INFO, LimitRangeStrategy(INFO), storage, "/registry/limitranges")}
