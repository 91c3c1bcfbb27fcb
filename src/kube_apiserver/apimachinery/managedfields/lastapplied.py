"""kubectl's move from client-side to server-side apply (lastappliedmanager.go, lastappliedupdater.go).

When the manager is exactly "kubectl", conflicts on fields that the object's
`kubectl.kubernetes.io/last-applied-configuration` annotation set, and that still hold the values it
set, are not conflicts: the apply is retried with force. After such an apply the annotation, if the
object has one, is rewritten to the newly applied configuration."""

from __future__ import annotations

import copy
import json
from typing import Any

from .compare import compare
from .fieldpath import FieldSet
from .schematype import TypeRef
from .typed import to_field_set
from .validate import validate
from .values import go_json

ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)


def _annotations(obj: Any) -> dict[str, Any] | None:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else None


def has_last_applied(obj: Any) -> bool:
    annotations = _annotations(obj)
    return bool(annotations and annotations.get(ANNOTATION))


def allowed_conflicts(live: Any, root: TypeRef, api_version: str) -> FieldSet | None:
    """allowedConflictsFromLastApplied: fields last-applied set that still hold those values."""
    annotations = _annotations(live)
    text = annotations.get(ANNOTATION) if annotations else None
    if not isinstance(text, str) or not text:
        return None
    try:
        last = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return None
    if validate(live, root, allow_duplicates=False, strict=False):
        return None
    if validate(last, root, allow_duplicates=False, strict=True):
        return None
    comparison = compare(last, live, root)
    fields = to_field_set(last, root)
    return fields.difference(comparison.modified).difference(comparison.added).difference(comparison.removed)


def build_last_applied(config: dict[str, Any]) -> str:
    """The applied configuration without the annotation, as unstructured JSON encodes it."""
    config = copy.deepcopy(config)
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        metadata["annotations"].pop(ANNOTATION, None)
    return go_json(config) + "\n"


def set_last_applied(obj: dict[str, Any], text: str) -> None:
    """SetLastApplied: dropped instead when the annotations would exceed 256KiB."""
    metadata = dict(obj.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    annotations[ANNOTATION] = text
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        del annotations[ANNOTATION]
    metadata["annotations"] = annotations
    obj["metadata"] = metadata
