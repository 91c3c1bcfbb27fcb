"""JSON values as CEL sees them under an OpenAPI schema (k8s.io/apiserver/pkg/cel/common
UnstructuredToVal), converted ahead of evaluation because the interpreter cannot call back lazily:

- `type: number` values are doubles even when JSON wrote them as integers, `type: integer` are ints;
- strings with `format: byte | duration | date | date-time` become bytes, durations and timestamps;
- objects with `properties` expose only declared properties, under their escaped names
  (`namespace` -> `__namespace__`, `a-b` -> `a__dash__b`), and a null property counts as absent;
- embedded resources (and the resource root) see `apiVersion`, `kind`, `metadata.name` and
  `metadata.generateName` even when the schema leaves them out;
- objects with neither `properties` nor `additionalProperties` are empty maps to CEL.

Without a schema, values pass through unchanged (ints stay ints, floats stay doubles)."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from kube_apiserver.apimachinery.goduration import parse_strfmt_duration_ns

Schema = dict[str, Any]

RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
    "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
_PLAIN = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_ESCAPABLE = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """cel.Escape: the CEL identifier for a property name, or None when it cannot be expressed."""
    if not name or name[0].isdigit():
        return None
    if name in RESERVED:
        return f"__{name}__"
    if _PLAIN.fullmatch(name) and "__" not in name:
        return name
    if not _ESCAPABLE.fullmatch(name):
        return None
    return re.sub(r"__|[.\-/]", lambda m: _ESCAPES[m.group()], name)


def with_type_and_object_meta(schema: Schema) -> Schema:
    """The schema of an embedded resource (or resource root) as CEL sees it."""
    string = {"type": "string"}
    properties = dict(schema.get("properties") or {})
    properties.update(kind=string, apiVersion=string,
                      metadata={"type": "object", "properties": {"name": string, "generateName": string}})
    return {**schema, "properties": properties}


def to_cel(value: Any, schema: Schema | None = None, root: bool = False) -> Any:
    """`value` (parsed JSON) converted for evaluation under `schema`; `root` marks a resource root."""
    if schema is None or value is None:
        return value
    if root:
        schema = with_type_and_object_meta(schema)
    return _convert(value, schema)


def _convert(value: Any, schema: Schema) -> Any:
    if value is None or schema.get("x-kubernetes-int-or-string"):
        return value
    kind = schema.get("type")
    if kind == "object" and isinstance(value, dict):
        return _object(value, schema)
    if kind == "array" and isinstance(value, list):
        items = schema.get("items")
        return [_convert(item, items) for item in value] if isinstance(items, dict) else value
    if kind == "string" and isinstance(value, str):
        return _string(value, schema.get("format", ""))
    if kind == "number" and type(value) in (int, float):
        return float(value)
    if kind == "integer" and type(value) is float and value.is_integer():
        return int(value)
    return value


def _object(value: dict[str, Any], schema: Schema) -> dict[str, Any]:
    if schema.get("x-kubernetes-embedded-resource"):
        schema = with_type_and_object_meta(schema)
    properties = schema.get("properties")
    if properties is not None:
        result = {}
        for name, item in value.items():
            escaped = escape(name) if name in properties else None
            if escaped is not None and item is not None:
                result[escaped] = _convert(item, properties[name])
        return result
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        return {name: _convert(item, additional) for name, item in value.items()}
    return {}


def _string(value: str, fmt: str) -> Any:
    """Formatted strings as CEL values; unparsable ones stay strings (validation reports them)."""
    try:
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
        if fmt == "duration":
            return parse_duration(value)
        if fmt == "date":
            return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
        if fmt == "date-time":
            parsed = datetime.fromisoformat(value)
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, binascii.Error):
        return value
    return value


def parse_duration(text: str) -> timedelta:
    """A `format: duration` string as CEL sees it: Kubernetes converts it with strfmt.ParseDuration (Go's
    grammar, else "<n> <unit>" pairs with days and weeks), truncated to the microseconds timedelta holds."""
    return timedelta(microseconds=parse_strfmt_duration_ns(text) // 1000)
