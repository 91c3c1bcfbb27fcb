"""Go's type errors for a decoded body, derived from the kind's OpenAPI schema: the 400 kube-apiserver
answers when JSON does not fit the Go struct (encoding/json UnmarshalTypeError, as sigs.k8s.io/json
keeps them), instead of letting a wrongly typed value reach validation or storage:

    json: cannot unmarshal number into Go struct field ConfigMap.data of type string

The struct named is the innermost definition holding the field; the field is the JSON path from the
root (array indexes and map keys are not part of it). Only plain types are checked: values the Go
type decodes from several JSON kinds (quantities, int-or-string, raw JSON) are left to validation."""

from __future__ import annotations

import functools
from typing import Any

from .jsontypes import number_error, value_kind
from .openapischema import Node

# Definitions whose Go types accept any JSON value.
ANY_JSON = frozenset({"RawExtension", "FieldsV1", "JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool",
                      "JSONSchemaPropsOrStringArray"})


class TypeMismatch(Exception):
    pass


@functools.cache
def short(definition: str) -> str:
    return definition.rsplit(".", 1)[-1]


def go_type(node: Node) -> str:
    """The Go type the error names for a node ("int32", "v1.PodSpec", "map[string]string", "[]string")."""
    kind = node.type
    if kind == "integer":
        return node.schema.get("format") if node.schema.get("format") in ("int32", "int64") else "int64"
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "string":
        return "string"
    if kind == "array":
        items = node.items()
        return "[]" + (go_type(items) if items is not None else "interface {}")
    if node.definition:
        package = node.definition.rsplit(".", 2)
        return f"{package[-2]}.{package[-1]}" if len(package) == 3 else short(node.definition)
    additional = node.additional()
    if additional is not None and additional.definition.endswith("resource.Quantity"):
        return "v1.ResourceList"  # the named map of quantities (map[ResourceName]resource.Quantity)
    return "map[string]" + (go_type(additional) if additional is not None else "interface {}")


def _skipped(node: Node) -> bool:
    schema = node.schema
    return (node.int_or_string or node.preserves_unknown_fields or "oneOf" in schema or "anyOf" in schema
            or short(node.definition) in ANY_JSON or not node.type)


def _mismatch(value: Any, node: Node) -> str | None:
    """What the error says the value was, or None when its JSON kind fits the node's type."""
    kind = node.type
    if kind == "integer":
        return number_error(value, go_type(node))
    if kind == "number":
        return None if isinstance(value, int | float) and not isinstance(value, bool) else value_kind(value)
    expected = {"string": str, "boolean": bool, "array": list, "object": dict}[kind]
    return None if isinstance(value, expected) else value_kind(value)


def _walk(value: Any, node: Node, holder: str, path: str) -> None:
    if value is None or _skipped(node):
        return
    wrong = _mismatch(value, node)
    if wrong is not None:
        raise TypeMismatch(f"json: cannot unmarshal {wrong} into Go struct field {holder}.{path} of type "
                           f"{go_type(node)}")
    if isinstance(value, list):
        items = node.items()
        for item in value if items is not None else ():
            _walk(item, items, holder, path)
    elif isinstance(value, dict):
        _walk_object(value, node, holder, path)


def _walk_object(value: dict[str, Any], node: Node, holder: str, path: str) -> None:
    properties = node.properties()
    if node.definition:
        holder = short(node.definition)
    additional = node.additional()
    for key, item in value.items():
        if key in properties:
            child = node.child(key)
            if child is not None:
                _walk(item, child, holder, f"{path}.{key}" if path else key)
        elif additional is not None and not properties:
            _walk(item, additional, holder, path)


def check(obj: dict[str, Any], root: Node) -> str | None:
    """The first type error Go would report decoding `obj` into the kind, or None."""
    try:
        _walk_object(obj, root, short(root.definition), "")
    except TypeMismatch as err:
        return str(err)
    return None
