"""The PersistentVolume strategy and its status strategy (pkg/registry/core/persistentvolume/strategy.go)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....apimachinery.meta import now_rfc3339, status_of
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ..pod.strategy import decode_defaults
from ..podspec.defaults import default_resource_list
from ..podspec.volume_defaults import SOURCE_DEFAULTS
from ..volumetypes import check_kind
from .validation import validate_pv, validate_pv_update

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "persistentvolumes", "PersistentVolume", "persistentvolume", False,
                    short_names=("pv",))

def default_sources(spec: Object) -> None:
    """The defaults of the sources a PersistentVolume holds (hostPath type, iSCSI interface, RBD, Azure
    disk, ScaleIO)."""
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    for key, defaults in SOURCE_DEFAULTS.items():
        source = spec.get(key)
        for name, value in defaults if isinstance(source, dict) else ():
            if source.get(name) is None:
                source[name] = value

def default_pv(obj: Object) -> None:
    """SetObjectDefaults_PersistentVolume: phase Pending, reclaim policy Retain, volume mode Filesystem."""
    spec = obj.setdefault("spec", {})
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
    if isinstance(spec, dict):
        default_resource_list(spec.get("capacity"))
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        if spec.get("volumeMode") is None:
            spec["volumeMode"] = "Filesystem"
        default_sources(spec)

class PersistentVolumeStrategy(Strategy):
    has_status_subresource = True
    selectable_fields = ("name",)

    def default(self, obj: Object) -> None:
        check_kind("PersistentVolume", obj)
        decode_defaults("PersistentVolume", default_pv, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_pv(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return super().validate_update(ctx, obj, old) + validate_pv_update(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["name"] = fields["metadata.name"]  # "a bug, but supported for backward compatibility"
        return fields

class PersistentVolumeStatusStrategy(SubresourceStrategy):
    """The spec stays as stored; a phase change records when it happened."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        status, old_status = obj.setdefault("status", {}), status_of(old)
        when, old_when = status.get("lastPhaseTransitionTime"), old_status.get("lastPhaseTransitionTime")
        if status.get("phase") == old_status.get("phase") and when is None:
            if old_when is not None:
                status["lastPhaseTransitionTime"] = old_when
        elif status.get("phase") != old_status.get("phase") and when in (None, old_when):
            status["lastPhaseTransitionTime"] = now_rfc3339()

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidatePersistentVolumeStatusUpdate."""
        return Strategy.validate_update(self, ctx, obj, old)

def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=PersistentVolumeStatusStrategy(store.strategy))
