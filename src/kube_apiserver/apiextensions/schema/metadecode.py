"""ObjectMeta through a Go JSON round trip (objectmeta/coerce.go GetObjectMeta + SetObjectMeta).

Upstream decodes a custom resource's ``metadata`` into ``metav1.ObjectMeta`` and encodes it back:
unknown fields disappear (reported as ``metadata.foo`` when asked), values of the wrong type fail
with encoding/json's error text, times are re-rendered in UTC without fractions, empty
``omitempty`` fields vanish. This module does that directly on dicts; the result has sorted keys
as a Go map has when encoded.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from ...apimachinery.jsontypes import number_error, value_kind

STRING, INT64, TIME, BOOL, STRMAP, STRLIST, RAW = "string", "int64", "Time", "bool", "map", "list", "raw"

_OWNER_REFERENCE = {"apiVersion": (STRING, True), "kind": (STRING, True), "name": (STRING, True),
                    "uid": (STRING, True), "controller": (BOOL, False), "blockOwnerDeletion": (BOOL, False)}
_MANAGED_FIELDS_ENTRY = {"manager": (STRING, False), "operation": (STRING, False),
                         "apiVersion": (STRING, False), "time": (TIME, False), "fieldsType": (STRING, False),
                         "fieldsV1": (RAW, False), "subresource": (STRING, False)}
# JSON name -> (kind, emitted even when empty); creationTimestamp is a struct, never "empty"
_OBJECT_META: dict[str, tuple[Any, bool]] = {
    "name": (STRING, False), "generateName": (STRING, False), "namespace": (STRING, False),
    "selfLink": (STRING, False), "uid": (STRING, False), "resourceVersion": (STRING, False),
    "generation": (INT64, False), "creationTimestamp": (TIME, True), "deletionTimestamp": (TIME, False),
    "deletionGracePeriodSeconds": (INT64, False), "labels": (STRMAP, False), "annotations": (STRMAP, False),
    "ownerReferences": (("OwnerReference", _OWNER_REFERENCE), False), "finalizers": (STRLIST, False),
    "managedFields": (("ManagedFieldsEntry", _MANAGED_FIELDS_ENTRY), False),
}
_GO_TYPES = {STRING: "string", INT64: "int64", BOOL: "bool", STRMAP: "map[string]string",
             STRLIST: "[]string", "OwnerReference": "[]v1.OwnerReference",
             "ManagedFieldsEntry": "[]v1.ManagedFieldsEntry"}
_POINTER_KINDS = {"deletionTimestamp", "deletionGracePeriodSeconds", "controller", "blockOwnerDeletion",
                  "time", "fieldsV1"}


class MetaDecodeError(Exception):
    """encoding/json's error for a metadata value that does not fit ObjectMeta."""


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z")


def parse_time(text: str) -> datetime:
    """``time.Parse(time.RFC3339, text)``, as metav1.Time decodes."""
    m = _RFC3339.match(text)
    if m is None:
        raise MetaDecodeError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse '
                              f'"{text}" as "2006"')
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    zone = m.group(8)
    tz = UTC if zone == "Z" else timezone((-1 if zone[0] == "-" else 1) * timedelta(
        hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        raise MetaDecodeError(f'parsing time "{text}": day out of range') from None


def format_time(value: datetime) -> str:
    """metav1.Time as it is encoded: RFC3339 in UTC, whole seconds."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _type_error(value: Any, holder: str, path: str, go_type: str) -> MetaDecodeError:
    return MetaDecodeError(f"json: cannot unmarshal {value} into Go struct field {holder}.{path} of type {go_type}")


def _scalar(kind: str, value: Any, holder: str, path: str) -> Any:
    """The decoded-and-re-encoded form of one scalar field; raises MetaDecodeError."""
    if kind == STRING:
        if not isinstance(value, str):
            raise _type_error(value_kind(value), holder, path, "string")
        return value
    if kind == INT64:
        wrong = number_error(value, "int64")
        if wrong is not None:
            raise _type_error(wrong, holder, path, "int64")
        return int(value)
    if kind == BOOL:
        if not isinstance(value, bool):
            raise _type_error(value_kind(value), holder, path, "bool")
        return value
    if kind == TIME:
        if not isinstance(value, str):
            raise MetaDecodeError(f"json: cannot unmarshal {value_kind(value)} into Go value of type string")
        return format_time(parse_time(value))
    return value  # RAW (fieldsV1): any JSON


def _string_collection(kind: str, value: Any, holder: str, path: str) -> Any:
    if kind == STRMAP:
        if not isinstance(value, dict):
            raise _type_error(value_kind(value), holder, path, "map[string]string")
        out = {}
        for k, v in value.items():
            out[k] = "" if v is None else _scalar(STRING, v, holder, path)
        return out
    if not isinstance(value, list):
        raise _type_error(value_kind(value), holder, path, "[]string")
    return ["" if v is None else _scalar(STRING, v, holder, path) for v in value]


def _struct_list(spec: tuple[str, dict[str, Any]], value: Any, holder: str, path: str, prefix: str,
                 unknown: list[str] | None) -> list[dict[str, Any]]:
    name, fields = spec
    if not isinstance(value, list):
        raise _type_error(value_kind(value), holder, path, _GO_TYPES[name])
    out = []
    for i, item in enumerate(value):
        if item is None:
            item = {}
        if not isinstance(item, dict):
            raise _type_error(value_kind(item), holder, path, f"v1.{name}")
        out.append(_struct(fields, item, name, path, f"{prefix}[{i}]", unknown))
    return out


def _struct(fields: dict[str, Any], value: dict[str, Any], holder: str, base: str, prefix: str,
            unknown: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(value):
        spec = fields.get(key)
        if spec is None:
            if unknown is not None:
                unknown.append(f"{prefix}.{key}")
            continue
        kind, always = spec
        decoded = _field(kind, value[key], holder, f"{base}.{key}" if base else key, f"{prefix}.{key}", unknown)
        if decoded is not None and (always or decoded not in ("", 0, False, {}, []) or (
                key in _POINTER_KINDS)):
            out[key] = decoded
    for key, (kind, always) in fields.items():
        if always and key not in out:
            out[key] = "" if kind == STRING else None
    return dict(sorted(out.items()))


def _field(kind: Any, value: Any, holder: str, path: str, prefix: str, unknown: list[str] | None) -> Any:
    if value is None:
        return None
    if isinstance(kind, tuple):
        return _struct_list(kind, value, holder, path, prefix, unknown) or None
    if kind in (STRMAP, STRLIST):
        return _string_collection(kind, value, holder, path) or None
    return _scalar(kind, value, holder, path)


def decode_object_meta(metadata: Any, unknown: list[str] | None = None, prefix: str = "metadata") -> dict[str, Any]:
    """ObjectMeta's round trip of ``metadata``; unknown field paths are appended to ``unknown``."""
    if not isinstance(metadata, dict):
        raise MetaDecodeError(f"json: cannot unmarshal {value_kind(metadata)} into Go value of type v1.ObjectMeta")
    return _struct(_OBJECT_META, metadata, "ObjectMeta", "", prefix, unknown)


def decode_object_meta_lenient(metadata: dict[str, Any], unknown: list[str] | None = None,
                               prefix: str = "metadata") -> dict[str, Any]:
    """Field-by-field decoding that drops the fields which fail (DropMalformedFields)."""
    accepted = {}
    for key, value in metadata.items():
        try:
            decode_object_meta({key: value})
        except MetaDecodeError:
            continue
        accepted[key] = value
    return decode_object_meta(accepted, unknown, prefix)
