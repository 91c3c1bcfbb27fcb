"""Helpers for the managedfields tests: field managers over the built-in v1.34 schemas, a settable clock."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery.managedfields import FieldManager
from kube_apiserver.apimachinery.openapischema import Node, SchemaSource

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)
T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: int = 1) -> None:
        self.now += timedelta(seconds=seconds)


def schema_for(group: str, version: str, kind: str) -> Node:
    node = SOURCE.for_kind(group, version, kind)
    assert node is not None
    return node


def deployments(clock: Clock | None = None, **options: Any) -> FieldManager:
    return FieldManager(schema_for("apps", "v1", "Deployment"), "apps/v1", kind="Deployment",
                        clock=clock or Clock(), **options)


def configmaps(clock: Clock | None = None) -> FieldManager:
    return FieldManager(schema_for("", "v1", "ConfigMap"), "v1", kind="ConfigMap", clock=clock or Clock())


def deployment(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "nginx", "image": "nginx:1"}]}},
        },
    }
    body["spec"].update(spec)
    return body


def stored(obj: dict[str, Any], uid: str = "uid-1") -> dict[str, Any]:
    """The object as storage would hold it after a create (it has a uid)."""
    out = copy.deepcopy(obj)
    out["metadata"]["uid"] = uid
    return out


def entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["metadata"].get("managedFields") or []


def owned(obj: dict[str, Any], manager: str, operation: str = "Apply") -> dict[str, Any]:
    found = [e for e in entries(obj) if e["manager"] == manager and e["operation"] == operation]
    assert len(found) == 1, entries(obj)
    return found[0]["fieldsV1"]

