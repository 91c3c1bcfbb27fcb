"""Go's typed decoding of a body, derived from the kind's OpenAPI schema: what kube-apiserver's JSON decoding
into the Go struct does to a built-in object before defaulting and validation see it.

- A value of the wrong JSON type is the 400 kube-apiserver answers (encoding/json UnmarshalTypeError, as
  sigs.k8s.io/json keeps them) instead of reaching validation or storage:

      json: cannot unmarshal number into Go struct field ConfigMap.data of type string

  The struct named is the innermost definition holding the field; the field is the JSON path from the root
  (array indexes and map keys are not part of it).
- null leaves a field at its zero value: a field set to null is absent (nil), except scalars without omitempty, which
  Go writes out as their zero value (PriorityClass `value: null` is 0); a null map value or list item is the
  zero value of its type (a label `null` is "", `cidrs: [null]` is [""]).
- A scalar field Go leaves out when zero (omitempty, not a pointer: `externalName: ""`, `globalDefault:
  false`) is removed when it holds its zero value: the struct cannot tell it from absent (go_omitempty.py,
  generated from the Go facts).
- []byte fields (`format: byte`) are base64 as Go decodes it (CR and LF ignored, Go's offset of the first bad
  byte) and are re-encoded canonically; int-or-string and quantity values of another JSON kind are refused as
  their UnmarshalJSON refuses them.

Values whose Go type takes any JSON (raw extensions, JSON, preserved unknown fields) are left as sent."""

from __future__ import annotations

import base64
import functools
from typing import Any

from .go_omitempty import OMIT_WHEN_ZERO
from .jsontypes import CorruptBase64, decode_base64, number_error, value_kind
from .openapischema import Node

# Definitions whose Go types accept any JSON value.
ANY_JSON = frozenset({"RawExtension", "FieldsV1", "JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool",
                      "JSONSchemaPropsOrStringArray"})
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# resource.ErrFormatWrong: what Quantity.UnmarshalJSON answers for a value that is neither string nor number.
QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SCALARS = ("string", "integer", "number", "boolean")


class TypeMismatch(Exception):
    """The decoding error, with Go's message."""


@functools.cache
def short(definition: str) -> str:
    return definition.rsplit(".", 1)[-1]


def openapi_message(definition: str) -> str:
    """The protobuf message of an OpenAPI definition: io.k8s.api.core.v1.Pod is k8s.io.api.core.v1.Pod, and
    io.k8s.apiextensions-apiserver.pkg... is k8s.io.apiextensions_apiserver.pkg..."""
    return "k8s.io." + definition.removeprefix("io.k8s.").replace("-", "_")


@functools.cache
def omitted_when_zero(definition: str) -> frozenset[str]:
    return OMIT_WHEN_ZERO.get(openapi_message(definition), frozenset()) if definition else frozenset()


def _is_zero_scalar(value: Any) -> bool:
    return value is False or value == "" or (type(value) in (int, float) and value == 0)


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
        return "[]uint8" if node.schema.get("format") == "byte" else "string"
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
    return (node.preserves_unknown_fields or "oneOf" in schema or "anyOf" in schema
            or short(node.definition) in ANY_JSON or not node.type)


def _zero(node: Node) -> Any:
    """What a JSON null decodes to as a list item or map value: the Go zero value of its type (None: nil)."""
    if node.int_or_string:
        return 0
    if node.definition == QUANTITY:
        return "0"
    if _skipped(node):
        return None
    kind = node.type
    if kind == "string":
        return None if node.schema.get("format") == "byte" else ""
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "object" and node.properties():
        return {}  # a struct; maps and slices are nil
    return None


class _Decoder:
    def __init__(self, normalize: bool):
        self.normalize = normalize  # False: only find the error, leave the value as sent

    def value(self, value: Any, node: Node, holder: str, path: str) -> Any:
        """`value` as Go decodes it into the node's type (containers are changed in place)."""
        if node.int_or_string:
            return self._int_or_string(value, holder, path)
        if node.definition == QUANTITY:
            if isinstance(value, bool | list | dict):
                raise TypeMismatch(QUANTITY_FORMAT)
            return value
        if _skipped(node):
            return value
        wrong = _mismatch(value, node)
        if wrong is not None:
            raise TypeMismatch(f"json: cannot unmarshal {wrong} into Go struct field {holder}.{path} of type "
                               f"{go_type(node)}")
        if isinstance(value, list):
            items = node.items()
            for index, item in enumerate(value if items is not None else ()):
                decoded = self.item(item, items, holder, path)
                if self.normalize:
                    value[index] = decoded
        elif isinstance(value, dict):
            self.object(value, node, holder, path)
        elif isinstance(value, str) and node.schema.get("format") == "byte":
            return _bytes(value)
        elif isinstance(value, float) and node.type == "integer":
            return int(value)  # integral (number_error refused the rest), as YAML's 5.0 reaches Go
        return value

    def item(self, item: Any, node: Node, holder: str, path: str) -> Any:
        """A list item or map value."""
        return _zero(node) if item is None else self.value(item, node, holder, path)

    def object(self, value: dict[str, Any], node: Node, holder: str, path: str) -> None:
        properties = node.properties()
        if node.definition:
            holder = short(node.definition)
        additional = node.additional()
        omitted = omitted_when_zero(node.definition) if self.normalize else frozenset()
        for key, item in list(value.items()):
            if key in properties:
                child = node.child(key)
                if child is None:
                    continue
                if item is not None:
                    decoded = self.value(item, child, holder, f"{path}.{key}" if path else key)
                    if key in omitted and _is_zero_scalar(decoded):
                        del value[key]
                        continue
                elif _null_is_zero(node.definition, key, child):
                    decoded = _zero(child)
                else:
                    if self.normalize:
                        del value[key]
                    continue
            elif additional is not None and not properties:
                decoded = self.item(item, additional, holder, path)
            else:
                continue
            if self.normalize:
                value[key] = decoded

    def _int_or_string(self, value: Any, holder: str, path: str) -> Any:
        """intstr.IntOrString.UnmarshalJSON: a string, else the value decoded as an int32."""
        if isinstance(value, str):
            return value
        wrong = number_error(value, "int32")
        if wrong is not None:
            raise TypeMismatch(f"json: cannot unmarshal {wrong} into Go struct field {holder}.{path} of type int32")
        return int(value)


def _null_is_zero(definition: str, key: str, child: Node) -> bool:
    """Whether a field set to null is written back as its zero value. encoding/json leaves the field as it
    was (nil for a pointer, else the zero value), and the zero value is written only by a scalar field
    without omitempty (PriorityClass value); a pointer (Ingress pathType) or an omitempty field is absent."""
    if child.type not in SCALARS or _skipped(child) or not definition:
        return False
    from . import protobuf  # the wire table knows Go's pointers and omitempty tags; loaded at the first null

    field = protobuf.go_field(definition, key)
    return field is not None and field.keep_zero and not field.pointer


def _mismatch(value: Any, node: Node) -> str | None:
    """What the error says the value was, or None when its JSON kind fits the node's type."""
    kind = node.type
    if kind == "integer":
        return number_error(value, go_type(node))
    if kind == "number":
        return None if isinstance(value, int | float) and not isinstance(value, bool) else value_kind(value)
    expected = {"string": str, "boolean": bool, "array": list, "object": dict}[kind]
    return None if isinstance(value, expected) else value_kind(value)


def _bytes(value: str) -> str:
    """A []byte field re-encoded as Go writes it: standard base64, unwrapped."""
    try:
        return base64.b64encode(decode_base64(value)).decode()
    except CorruptBase64 as err:
        raise TypeMismatch(str(err)) from None


def decode(obj: dict[str, Any], root: Node) -> str | None:
    """Decodes `obj` in place as Go decodes it into the kind; returns the first error, or None."""
    try:
        _Decoder(True).object(obj, root, short(root.definition), "")
    except TypeMismatch as err:
        return str(err)
    return None


def check(obj: dict[str, Any], root: Node) -> str | None:
    """The first error Go would report decoding `obj` into the kind, or None; `obj` is left as it is."""
    try:
        _Decoder(False).object(obj, root, short(root.definition), "")
    except TypeMismatch as err:
        return str(err)
    return None
