"""CEL types of schema nodes (k8s.io/apiserver pkg/cel/common SchemaDeclType, pkg/cel/types.go
DeclType): what the type check and the cost estimate of a rule know about ``self``.

A :class:`CelType` is either a declared type built from a structural schema (with cel-go's
``MaxElements`` and ``MinSerializedSize``) or one computed by the checker (``dyn``, ``bool``,
an opaque library type...).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...cel.activation import escape
from .structural import Structural

MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
MAX_DURATION_SIZE_JSON = 32
MAX_DATETIME_SIZE_JSON = 32
MIN_DURATION_SIZE_JSON = 3
JSON_DATE_SIZE = 12
MIN_DATETIME_SIZE_JSON = 21
SCALARS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})


@dataclass(eq=False)
class CelType:
    kind: str  # int uint double bool string bytes null duration timestamp list map object dyn type optional opaque
    elem: CelType | None = None  # list element, map value, optional value
    key: CelType | None = None  # map key
    fields: dict[str, CelType] | None = None  # object: escaped name -> type
    max_elements: int = 0
    min_size: int = 1
    name: str = ""  # opaque types: "kubernetes.URL", ...

    def is_scalar(self) -> bool:
        """checker.isScalar: a size known to be 1."""
        if self.kind == "optional" and self.elem is not None:
            return self.elem.is_scalar()
        return self.kind in SCALARS

    def show(self) -> str:
        """How cel-go prints the type in an error."""
        if self.kind == "list":
            return f"list({self.elem.show() if self.elem else 'dyn'})"
        if self.kind == "map":
            return f"map({self.key.show() if self.key else 'dyn'}, {self.elem.show() if self.elem else 'dyn'})"
        if self.kind == "optional":
            return f"optional_type({self.elem.show() if self.elem else 'dyn'})"
        if self.kind == "null":
            return "null_type"
        if self.kind == "duration":
            return "google.protobuf.Duration"
        if self.kind == "timestamp":
            return "google.protobuf.Timestamp"
        return self.name or self.kind


def simple(kind: str, name: str = "") -> CelType:
    return CelType(kind, name=name)


DYN = simple("dyn")
BOOL = simple("bool")
INT = simple("int")
UINT = simple("uint")
DOUBLE = simple("double")
STRING = simple("string")
BYTES = simple("bytes")
NULL = simple("null")
DURATION = simple("duration")
TIMESTAMP = simple("timestamp")
TYPE = simple("type")
# apiservercel.StringType, the key type of every map: its MaxElements is 0
MAP_KEY = CelType("string", min_size=2)


def list_of(elem: CelType, max_elements: int = 0) -> CelType:
    return CelType("list", elem=elem, max_elements=max_elements, min_size=2)


def map_of(key: CelType, value: CelType, max_elements: int = 0) -> CelType:
    return CelType("map", elem=value, key=key, max_elements=max_elements, min_size=2)


def optional_of(value: CelType) -> CelType:
    return CelType("optional", elem=value)


def decl_type(s: Structural | None, is_resource_root: bool = False) -> CelType | None:
    """``SchemaDeclType``: None when the node is not visible to CEL."""
    if s is None:
        return None
    vv = s.value_validation
    if s.x_int_or_string:
        max_length = vv.max_length if vv is not None else None
        bound = max(max_length, 0) * 4 if max_length is not None else MAX_REQUEST_SIZE_BYTES - 2
        return CelType("dyn", max_elements=bound, min_size=1)
    if s.type == "array":
        return _list_type(s)
    if s.type == "object":
        return _object_type(s, is_resource_root)
    if s.type == "string":
        return _string_type(s)
    return {"boolean": CelType("bool", min_size=4), "number": CelType("double", min_size=1),
            "integer": CelType("int", min_size=1)}.get(s.type)


def _list_type(s: Structural) -> CelType | None:
    if s.items is None:
        return None
    items = decl_type(s.items, s.items.x_embedded_resource)
    if items is None:
        return None
    max_items = s.value_validation.max_items if s.value_validation is not None else None
    bound = max(max_items, 0) if max_items is not None else (MAX_REQUEST_SIZE_BYTES - 2) // (items.min_size + 1)
    return list_of(items, bound)


def _object_type(s: Structural, is_resource_root: bool) -> CelType | None:
    vv = s.value_validation
    additional = s.additional_properties.structural if s.additional_properties is not None else None
    if additional is not None:
        value = decl_type(additional, additional.x_embedded_resource)
        if value is None:
            return None
        max_props = vv.max_properties if vv is not None else None
        bound = max(max_props, 0) if max_props is not None else (MAX_REQUEST_SIZE_BYTES - 2) // (value.min_size + 6)
        return map_of(MAP_KEY, value, bound)
    properties: dict[str, Structural] = dict(s.properties or {})
    if is_resource_root and not _has_type_and_meta(properties):
        string = Structural(type="string")
        properties.update(kind=string, apiVersion=string, metadata=Structural(
            type="object", properties={"name": string, "generateName": string}))
    required = set((vv.required if vv is not None else None) or ())
    fields: dict[str, CelType] = {}
    min_size = 2
    for name, prop in properties.items():
        field_type = decl_type(prop, prop.x_embedded_resource)
        if field_type is None:
            continue
        escaped = escape(name)
        if escaped is not None:
            fields[escaped] = field_type
        if name in required and prop.default is None:
            min_size += len(name) + field_type.min_size + 4
    return CelType("object", fields=fields, min_size=min_size, name="object")


def _has_type_and_meta(properties: dict[str, Structural]) -> bool:
    meta = properties.get("metadata")
    meta_props = (meta.properties or {}) if meta is not None else {}
    return (all(properties.get(k) is not None and properties[k].type == "string" for k in ("kind", "apiVersion"))
            and meta is not None and meta.type == "object"
            and all(meta_props.get(k) is not None and meta_props[k].type == "string" for k in ("name", "generateName")))


def _string_type(s: Structural) -> CelType:
    vv = s.value_validation
    fmt = vv.format if vv is not None else ""
    max_length = vv.max_length if vv is not None else None
    if fmt == "byte":
        bound = max(max_length, 0) if max_length is not None else MAX_REQUEST_SIZE_BYTES - 2
        return CelType("bytes", max_elements=bound, min_size=2)
    if fmt == "duration":
        return CelType("duration", max_elements=MAX_DURATION_SIZE_JSON, min_size=MIN_DURATION_SIZE_JSON)
    if fmt == "date":
        return CelType("timestamp", max_elements=JSON_DATE_SIZE, min_size=JSON_DATE_SIZE)
    if fmt == "date-time":
        return CelType("timestamp", max_elements=MAX_DATETIME_SIZE_JSON, min_size=MIN_DATETIME_SIZE_JSON)
    if max_length is not None:
        bound = max(max_length, 0) * 4
    elif vv is not None and vv.enum:
        bound = max((len(v) for v in vv.enum if isinstance(v, str)), default=0)
    else:
        bound = MAX_REQUEST_SIZE_BYTES - 2
    return CelType("string", max_elements=bound, min_size=2)
