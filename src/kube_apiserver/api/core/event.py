"""events (core/v1; pkg/registry/core/event, ValidateEventCreate for v1 core events)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import TableConvertor, human_duration
from ...storage.factory import StorageFactory

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "events", "Event", "event", True, short_names=("ev",))
SELECTABLE = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
              "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
              "reason", "reportingComponent", "source", "type")


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


def last_seen(obj: Object) -> str:
    import datetime
    stamp = obj.get("lastTimestamp") or obj.get("eventTime") or (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return "<unknown>"
    when = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return human_duration((datetime.datetime.now(datetime.UTC) - when).total_seconds())


def object_of(involved: Object) -> str:
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


# The columns kube-apiserver prints for events, in both core/v1 and events.k8s.io/v1.
COLUMNS = (
    TableColumn("Last Seen", "string", "", "Time when this Event was last observed"),
    TableColumn("Type", "string", "", "Type of this event (Normal, Warning)"),
    TableColumn("Reason", "string", "", "Short, machine understandable string that gives the reason"),
    TableColumn("Object", "string", "", "The object that this event is about"),
    TableColumn("Message", "string", "", "A human-readable description of the status of this operation"),
)
TABLE = TableConvertor(COLUMNS, lambda o: [last_seen(o), o.get("type", ""), o.get("reason", ""), object_of(o.get("involvedObject") or {}),
              o.get("message", "")])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    strategy = EventStrategy(INFO)
    strategy.event_ttl = getattr(storage, "event_ttl", strategy.event_ttl)
    return {"events": Store(INFO, strategy, storage, "/registry/events", TABLE)}
