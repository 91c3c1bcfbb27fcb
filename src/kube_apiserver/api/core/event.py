"""events (core/v1; pkg/registry/core/event, ValidateEventCreate for v1 core events)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
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


class EventStrategy(Strategy):
    selectable_fields = SELECTABLE
    event_ttl = 3600.0

    def ttl(self, obj: Object) -> float:
        return self.event_ttl

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        involved = obj.get("involvedObject") or {}
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        involved_ns = involved.get("namespace", "")
        if involved_ns and namespace and involved_ns != namespace:
            errs.append(field.invalid(field.Path("involvedObject", "namespace"), involved_ns,
                                      "does not match event.namespace"))
        event_type = obj.get("type")
        if event_type and event_type not in ("Normal", "Warning"):
            errs.append(field.not_supported(field.Path("type"), event_type, ["Normal", "Warning"]))
        return errs

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        involved = obj.get("involvedObject") or {}
        for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
            fields[f"involvedObject.{key}"] = str(involved.get(key, ""))
        fields["reason"] = obj.get("reason", "")
        fields["reportingComponent"] = obj.get("reportingComponent", "")
        fields["source"] = (obj.get("source") or {}).get("component", "")
        fields["type"] = obj.get("type", "")
        return fields


def _since(stamp: Any) -> str:
    """translateTimestampSince / translateMicroTimestampSince: <unknown> for a zero time."""
    import datetime
    if not stamp:
        return "<unknown>"
    when = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return human_duration((datetime.datetime.now(datetime.UTC) - when).total_seconds())


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
