"""Server-side printing: objects as meta.k8s.io/v1 Tables (the rows kubectl get prints)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..apimachinery.clock import wall_now
from .rest import TableColumn

Object = dict[str, Any]

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this "
    "value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null "
    "for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")

NAME = TableColumn("Name", "string", "name", NAME_DESCRIPTION)
AGE = TableColumn("Age", "string", "", CREATED_DESCRIPTION)


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    if seconds < -1:
        return "<invalid>"
    s = max(int(seconds), 0)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    years, days = hours // 24 // 365, hours // 24 % 365
    if hours < 24 * 365 * 8:
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{years}y"


def age(obj: Object) -> str:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return "<unknown>"
    created = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    return human_duration((wall_now() - created).total_seconds())


def name(obj: Object) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def partial_object_metadata(obj: Object) -> Object:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


@dataclass(frozen=True)
class TableConvertor:
    columns: tuple[TableColumn, ...]
    cells: Callable[[Object], list[Any]]

    def column_definitions(self) -> list[dict[str, Any]]:
        return [{"name": c.name, "type": c.type, "format": c.format, "description": c.description,
                 "priority": c.priority} for c in self.columns]

    def row(self, obj: Object, include_object: str) -> dict[str, Any]:
        row: dict[str, Any] = {"cells": self.cells(obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial_object_metadata(obj)
        return row

    def convert(self, obj: Object, include_object: str = "Metadata") -> Object:
        """A single object or a list (an object with `items`) as one Table."""
        items = obj["items"] if "items" in obj and isinstance(obj.get("items"), list) else [obj]
        meta = obj.get("metadata") or {}
        table_meta = {k: meta[k] for k in ("resourceVersion", "continue", "remainingItemCount") if k in meta}
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": table_meta,
                "columnDefinitions": self.column_definitions(),
                "rows": [self.row(item, include_object) for item in items]}


def default_table_convertor() -> TableConvertor:
    """What kube-apiserver prints for a resource without its own columns: Name and Created At."""
    created = TableColumn("Created At", "date", "", CREATED_DESCRIPTION)
    return TableConvertor((NAME, created), lambda o: [name(o), (o.get("metadata") or {}).get("creationTimestamp")])
