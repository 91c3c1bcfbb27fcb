"""The "empty object" a create or apply-on-create starts from (what `scheme.New(kind)` encodes to).

Kubernetes compares a created object against a freshly made Go struct, in which non-pointer struct
fields are present as objects and non-omitempty slices and maps are null; only fields that appear
anew get a `.` marker in managedFields. The published OpenAPI v3 marks non-pointer struct fields with
`default: {}` and non-omitempty fields as `required`; schemas without those markers (and custom
resources, which start from an empty unstructured object) give {}."""

from __future__ import annotations

from typing import Any

from ..openapischema import Node
from .schematype import TypeRef

_MAX_DEPTH = 24


def zero_object(ref: TypeRef) -> dict[str, Any]:
    """A new empty object of the type (the caller may change it): a copy of the one derived from its schema
    once, for every create records its managed fields against it."""
    return _fresh(ref.derived(zero_object, lambda node: _zero(node, 0))) if isinstance(ref, Node) else {}


def _fresh(template: dict[str, Any]) -> dict[str, Any]:
    """A copy of a zero object: nested empty structs are copied, the nulls shared."""
    return {name: _fresh(value) if isinstance(value, dict) else value for name, value in template.items()}


def _zero(node: Node, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if depth > _MAX_DEPTH:
        return out
    required = set(node.schema.get("required") or [])
    for name, raw in node.properties().items():
        child = Node.of(raw, node.definitions)
        if child is None:
            continue
        default = raw.get("default") if isinstance(raw, dict) and "default" in raw else child.schema.get("default")
        is_struct = child.type == "object" and bool(child.properties())
        if is_struct and (default == {} or (default is None and name in required)):
            out[name] = _zero(child, depth + 1)
        elif name in required and default is None and child.type in ("array", "object"):
            out[name] = None  # a non-omitempty slice or map: present, but null
    return out
