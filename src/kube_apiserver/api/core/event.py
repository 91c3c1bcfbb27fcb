"""events (core/v1; pkg/registry/core/event, ValidateEventCreate for v1 core events)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.clock import wall_now
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import NAME_DESCRIPTION, TableConvertor, human_duration, name
from ...storage.factory import StorageFactory

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "events", "Event", "event", True, short_names=("ev",))
SELECTABLE = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
              "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
              "reason", "reportingComponent", "source", "type")
FIELD_PATH_DESCRIPTION = (
    "If referring to a piece of an object instead of an entire object, this string should contain a valid "
    "JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object "
    "reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where "
    "\"name\" refers to the name of the container that triggered the event) or if no container name is specified "
    "\"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some "
    "well-defined way of referencing a part of an object.")


# Fields of core/v1 Event that Go's encoding/json writes even when unset (no omitempty, or struct typed):
# every Event kube-apiserver returns carries them.
ZERO_FIELDS: tuple[tuple[str, Any], ...] = (
    ("involvedObject", dict), ("source", dict), ("firstTimestamp", None), ("lastTimestamp", None),
    ("eventTime", None), ("reportingComponent", ""), ("reportingInstance", ""))


def fill_zero_fields(obj: Object) -> Object:
    for key, zero in ZERO_FIELDS:
        if obj.get(key) is None:
            obj[key] = zero() if callable(zero) else zero
    return obj


REPORTING_FIELD = "event-reporting-field"  # ctx.values key: how the request's version names reportingController
LENGTH_LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128))
NOTE_LIMIT = 1024


def _namespace_errors(obj: Object, namespace: str) -> field.ErrorList:
    """Event namespaces and their involved object's agree (default for cluster-scoped objects)."""
    involved_ns = (obj.get("involvedObject") or {}).get("namespace") or ""
    if not obj.get("eventTime"):
        bad = namespace != involved_ns if involved_ns else namespace not in ("", "default")
    else:
        bad = not involved_ns and namespace not in ("default", "kube-system")
    if bad:
        return [field.invalid(field.Path("involvedObject", "namespace"), involved_ns, "does not match event.namespace")]
    return []


def _new_style_errors(obj: Object, reporting_field: str) -> field.ErrorList:
    """What an event with an eventTime must carry."""
    errs: field.ErrorList = []
    controller = obj.get("reportingComponent") or ""
    if not controller:
        errs.append(field.required(field.Path(reporting_field), ""))
    errs += [field.invalid(field.Path(reporting_field), controller, msg)
             for msg in validation.is_qualified_name(controller)]
    for key, limit in LENGTH_LIMITS:
        value = obj.get(key) or ""
        if not value:
            errs.append(field.required(field.Path(key), ""))
        if len(value) > limit:
            errs.append(field.invalid(field.Path(key), "", f"can have at most {limit} characters"))
    if len(obj.get("message") or "") > NOTE_LIMIT:
        errs.append(field.invalid(field.Path("message"), "", f"can have at most {NOTE_LIMIT} characters"))
    return errs


def legacy_validate(obj: Object, reporting_field: str) -> field.ErrorList:
    """legacyValidateEvent, which every event passes whatever the API it comes through."""
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    errs = _namespace_errors(obj, namespace)
    if obj.get("eventTime"):
        errs += _new_style_errors(obj, reporting_field)
    return errs + [field.invalid(field.Path("namespace"), namespace, msg)
                   for msg in validation.is_dns1123_subdomain(namespace)]


class EventStrategy(Strategy):
    selectable_fields = SELECTABLE
    event_ttl = 3600.0

    def default(self, obj: Object) -> None:
        fill_zero_fields(obj)

    def ttl(self, obj: Object) -> float:
        return self.event_ttl

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        """ValidateEventCreate for core/v1: only the legacy checks (not even the name's format); the
        events.k8s.io REST adds its strict ones and names the reporting field its own way."""
        return legacy_validate(obj, ctx.values.get(REPORTING_FIELD, "reportingComponent"))

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        involved = obj.get("involvedObject") or {}
        for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
            fields[f"involvedObject.{key}"] = str(involved.get(key, ""))
        fields["reason"] = obj.get("reason", "")
        fields["reportingComponent"] = obj.get("reportingComponent", "")
        # An event of the events.k8s.io API has no source: its reporting controller stands in for it.
        fields["source"] = (obj.get("source") or {}).get("component") or obj.get("reportingComponent") or ""
        fields["type"] = obj.get("type", "")
        return fields


def _since(stamp: Any) -> str:
    """translateTimestampSince / translateMicroTimestampSince: <unknown> for a zero time."""
    import datetime
    if not stamp:
        return "<unknown>"
    when = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return human_duration((wall_now() - when).total_seconds())


def object_of(involved: Object) -> str:
    kind = str(involved.get("kind", "")).lower()
    return f"{kind}/{involved['name']}" if involved.get("name") else kind


def _source(obj: Object) -> str:
    """formatEventSource: the reporting controller/instance stand in for an empty source."""
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent", "")
    instance = source.get("host") or obj.get("reportingInstance", "")
    return f"{component}, {instance}" if instance else component


def cells(obj: Object) -> list[Any]:
    """printEvent with Wide set (kube-apiserver always prints wide; kubectl hides priority columns)."""
    first = _since(obj.get("firstTimestamp") or obj.get("eventTime"))
    last = _since(obj["lastTimestamp"]) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 0
    series = obj.get("series")
    if series:
        last, count = _since(series.get("lastObservedTime")), series.get("count") or 0
    elif not count:
        count = 1  # singleton events of the new API have no count
    involved = obj.get("involvedObject") or {}
    return [last, obj.get("type", ""), obj.get("reason", ""), object_of(involved), involved.get("fieldPath", ""),
            _source(obj), str(obj.get("message", "")).strip(), first, count, name(obj)]


# The columns kube-apiserver prints for events, in both core/v1 and events.k8s.io/v1 (printers.go).
COLUMNS = (
    TableColumn("Last Seen", "string", "", "The time at which the most recent occurrence of this event was recorded."),
    TableColumn("Type", "string", "", "Type of this event (Normal, Warning), new types could be added in the future"),
    TableColumn("Reason", "string", "", "This should be a short, machine understandable string that gives the reason "
                                        "for the transition into the object's current status."),
    TableColumn("Object", "string", "", "The object that this event is about."),
    TableColumn("Subobject", "string", "", FIELD_PATH_DESCRIPTION, 1),
    TableColumn("Source", "string", "", "The component reporting this event. Should be a short machine "
                                        "understandable string.", 1),
    TableColumn("Message", "string", "", "A human-readable description of the status of this operation."),
    TableColumn("First Seen", "string", "", "The time at which the event was first recorded. (Time of server "
                                            "receipt is in TypeMeta.)", 1),
    TableColumn("Count", "string", "", "The number of times this event has occurred.", 1),
    TableColumn("Name", "string", "name", NAME_DESCRIPTION, 1),
)
TABLE = TableConvertor(COLUMNS, cells)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    strategy = EventStrategy(INFO)
    strategy.event_ttl = getattr(storage, "event_ttl", strategy.event_ttl)
    return {"events": Store(INFO, strategy, storage, "/registry/events", TABLE)}
