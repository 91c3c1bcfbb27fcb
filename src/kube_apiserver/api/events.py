"""events.k8s.io/v1 Event: the same stored objects as core/v1 events, converted field by field
(pkg/apis/events/v1 conversion), with the stricter validation that creating through this group gets."""

from __future__ import annotations

from typing import Any

from ..apimachinery import errors, field, validation
from ..registry.context import Context
from ..registry.conversion import Conversion, ConvertedREST
from ..registry.rest import ResourceInfo, ValidateObjectFunc
from ..registry.strategy import Strategy
from ..registry.table import TableConvertor
from ..server.api_group_info import APIGroupInfo
from ..storage.factory import StorageFactory
from .core import event as core_event

Object = dict[str, Any]
GROUP = "events.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "events", "Event", "event", True, short_names=("ev",))
# events.k8s.io/v1 field <- core/v1 field
RENAMES = (("regarding", "involvedObject"), ("note", "message"), ("reportingController", "reportingComponent"),
           ("deprecatedSource", "source"), ("deprecatedFirstTimestamp", "firstTimestamp"),
           ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"))
SAME = ("metadata", "eventTime", "series", "reportingInstance", "action", "reason", "related", "type")
# events.k8s.io/v1 field selector label -> the stored core/v1 one (pkg/apis/events/v1
# AddFieldLabelConversionsForEvent); any other label is not supported.
FIELD_LABELS = {
    "reason": "reason", "reportingController": "reportingComponent", "source": "source", "type": "type",
    "metadata.namespace": "metadata.namespace", "metadata.name": "metadata.name",
    **{f"regarding.{key}": f"involvedObject.{key}"
       for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
}
# events.k8s.io/v1 string fields with omitempty: Go leaves them out when empty.
OMIT_EMPTY = ("reportingController", "reportingInstance", "action", "reason", "note", "type")


def from_core(obj: Object) -> Object:
    out: Object = {"apiVersion": f"{GROUP}/v1", "kind": "Event"}
    for key in SAME:
        if key in obj:
            out[key] = obj[key]
    for ours, theirs in RENAMES:
        if theirs in obj:
            out[ours] = obj[theirs]
    for key in OMIT_EMPTY:
        if out.get(key) == "":
            del out[key]
    return out


def to_core(obj: Object) -> Object:
    out: Object = {"apiVersion": "v1", "kind": "Event"}
    for key in SAME:
        if key in obj:
            out[key] = obj[key]
    for ours, theirs in RENAMES:
        if ours in obj:
            out[theirs] = obj[ours]
    return core_event.fill_zero_fields(out)


class EventsV1Strategy(Strategy):
    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        """ValidateEventCreate's checks for events.k8s.io/v1 (the core ones run on the stored object)."""
        errs: field.ErrorList = []
        if not obj.get("eventTime"):
            errs.append(field.required(field.Path("eventTime"), ""))
        if obj.get("type") not in ("Normal", "Warning"):
            errs.append(field.invalid(field.Path("type"), "", f"has invalid value: {obj.get('type', '')}"))
        for key in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount", "deprecatedSource"):
            if obj.get(key):
                errs.append(field.invalid(field.Path(key), "", "needs to be unset"))
        series = obj.get("series")
        if series is not None:
            if (series.get("count") or 0) < 2:
                errs.append(field.invalid(field.Path("series", "count"), "", "should be at least 2"))
            if not series.get("lastObservedTime"):
                errs.append(field.required(field.Path("series", "lastObservedTime"), ""))
        return errs


class EventsREST(ConvertedREST):
    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        """ValidateEventCreate: the legacy checks every event passes, then this group's strict ones."""
        meta = obj.get("metadata") or {}
        core = {**to_core(obj), "metadata": {**meta, "namespace": meta.get("namespace") or ctx.namespace}}
        errs = core_event.legacy_validate(core, "reportingController")
        errs += validation.validate_object_meta(meta, True, validation.name_is_dns_subdomain, field.Path("metadata"))
        errs += self.strategy.validate(ctx, obj)
        if errs:
            raise errors.invalid(INFO.kind, GROUP, meta.get("name", ""), errs)
        ctx.values[core_event.REPORTING_FIELD] = "reportingController"
        return await super().create(ctx, obj, create_validation, options)


# The same printer as core events: events.k8s.io objects are printed through their core form.
TABLE = TableConvertor(core_event.COLUMNS, lambda o: core_event.cells(to_core(o)))


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    inner = core_event.new_rest(storage)["events"]
    rest = EventsREST(INFO, EventsV1Strategy(INFO), inner, Conversion(to_core, from_core, FIELD_LABELS), TABLE)
    return APIGroupInfo(GROUP, {"v1": {"events": rest}})
