"""Bad values rendered as upstream renders them: field.Invalid gets internal Go structs, which
json.Marshal writes with Go field names, in declaration order, zero values included."""

from __future__ import annotations

from typing import Any

from ...apimachinery.field import OrderedStruct

Object = dict[str, Any]

# (Go field name, JSON key, kind); kinds: s=string, b=bool, f=float pointer, p=other pointer or slice,
# S=schema pointer, L=schema list, M=schema map, x=special
SCHEMA_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("ID", "id", "s"),
    ("Schema", "$schema", "s"),
    ("Ref", "$ref", "p"),
    ("Description", "description", "s"),
    ("Type", "type", "s"),
    ("Nullable", "nullable", "b"),
    ("Format", "format", "s"),
    ("Title", "title", "s"),
    ("Default", "default", "p"),
    ("Maximum", "maximum", "f"),
    ("ExclusiveMaximum", "exclusiveMaximum", "b"),
    ("Minimum", "minimum", "f"),
    ("ExclusiveMinimum", "exclusiveMinimum", "b"),
    ("MaxLength", "maxLength", "p"),
    ("MinLength", "minLength", "p"),
    ("Pattern", "pattern", "s"),
    ("MaxItems", "maxItems", "p"),
    ("MinItems", "minItems", "p"),
    ("UniqueItems", "uniqueItems", "b"),
    ("MultipleOf", "multipleOf", "f"),
    ("Enum", "enum", "p"),
    ("MaxProperties", "maxProperties", "p"),
    ("MinProperties", "minProperties", "p"),
    ("Required", "required", "p"),
    ("Items", "items", "x"),
    ("AllOf", "allOf", "L"),
    ("OneOf", "oneOf", "L"),
    ("AnyOf", "anyOf", "L"),
    ("Not", "not", "S"),
    ("Properties", "properties", "M"),
    ("AdditionalProperties", "additionalProperties", "x"),
    ("PatternProperties", "patternProperties", "M"),
    ("Dependencies", "dependencies", "x"),
    ("AdditionalItems", "additionalItems", "x"),
    ("Definitions", "definitions", "M"),
    ("ExternalDocs", "externalDocs", "x"),
    ("Example", "example", "p"),
    ("XPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields", "p"),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource", "b"),
    ("XIntOrString", "x-kubernetes-int-or-string", "b"),
    ("XListMapKeys", "x-kubernetes-list-map-keys", "p"),
    ("XListType", "x-kubernetes-list-type", "p"),
    ("XMapType", "x-kubernetes-map-type", "p"),
    ("XValidations", "x-kubernetes-validations", "x"),
)
_ZERO = {"s": "", "b": False}


def schema_struct(schema: Any) -> OrderedStruct | None:
    """apiextensions.JSONSchemaProps as json.Marshal renders it."""
    if not isinstance(schema, dict):
        return None
    items = []
    for go_name, key, kind in SCHEMA_FIELDS:
        items.append((go_name, _schema_value(schema.get(key), key, kind)))
    return OrderedStruct(tuple(items))


def _schema_value(value: Any, key: str, kind: str) -> Any:
    if kind in _ZERO:
        return _ZERO[kind] if value is None else value
    if kind == "f":
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if kind == "S":
        return schema_struct(value)
    if kind == "L":
        return None if value is None else [schema_struct(s) for s in value]
    if kind == "M":
        return None if value is None else {k: schema_struct(s) for k, s in value.items()}
    if kind == "x":
        return _SPECIAL[key](value)
    return value


def items_struct(items: Any) -> OrderedStruct | None:
    """JSONSchemaPropsOrArray."""
    if items is None:
        return None
    if isinstance(items, list):
        return OrderedStruct((("Schema", None), ("JSONSchemas", [schema_struct(s) for s in items])))
    return OrderedStruct((("Schema", schema_struct(items)), ("JSONSchemas", None)))


def _or_bool(value: Any) -> OrderedStruct | None:
    """JSONSchemaPropsOrBool."""
    if value is None:
        return None
    if isinstance(value, dict):
        return OrderedStruct((("Allows", True), ("Schema", schema_struct(value))))
    return OrderedStruct((("Allows", bool(value)), ("Schema", None)))


def _dependencies(value: Any) -> Any:
    if value is None:
        return None
    out = {}
    for key, dep in value.items():
        if isinstance(dep, dict):
            out[key] = OrderedStruct((("Schema", schema_struct(dep)), ("Property", None)))
        else:
            out[key] = OrderedStruct((("Schema", None), ("Property", dep)))
    return out


def _external_docs(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    return OrderedStruct((("Description", value.get("description") or ""), ("URL", value.get("url") or "")))


def rule_struct(rule: Any) -> OrderedStruct:
    """apiextensions.ValidationRule."""
    rule = rule if isinstance(rule, dict) else {}
    return OrderedStruct(
        (
            ("Rule", rule.get("rule") or ""),
            ("Message", rule.get("message") or ""),
            ("MessageExpression", rule.get("messageExpression") or ""),
            ("Reason", rule.get("reason")),
            ("FieldPath", rule.get("fieldPath") or ""),
            ("OptionalOldSelf", rule.get("optionalOldSelf")),
        )
    )


def _rules(value: Any) -> Any:
    return None if value is None else [rule_struct(r) for r in value]


_SPECIAL = {
    "items": items_struct,
    "additionalProperties": _or_bool,
    "additionalItems": _or_bool,
    "dependencies": _dependencies,
    "externalDocs": _external_docs,
    "x-kubernetes-validations": _rules,
}


def _subresources(value: Any) -> OrderedStruct | None:
    if not isinstance(value, dict):
        return None
    scale = value.get("scale")
    scale_struct = None
    if isinstance(scale, dict):
        scale_struct = OrderedStruct(
            (
                ("SpecReplicasPath", scale.get("specReplicasPath") or ""),
                ("StatusReplicasPath", scale.get("statusReplicasPath") or ""),
                ("LabelSelectorPath", scale.get("labelSelectorPath")),
            )
        )
    status = OrderedStruct(()) if value.get("status") is not None else None
    return OrderedStruct((("Status", status), ("Scale", scale_struct)))


def _column(col: Any) -> OrderedStruct:
    col = col if isinstance(col, dict) else {}
    return OrderedStruct(
        (
            ("Name", col.get("name") or ""),
            ("Type", col.get("type") or ""),
            ("Format", col.get("format") or ""),
            ("Description", col.get("description") or ""),
            ("Priority", col.get("priority") or 0),
            ("JSONPath", col.get("jsonPath") or ""),
        )
    )


def version_struct(version: Object) -> OrderedStruct:
    """apiextensions.CustomResourceDefinitionVersion."""
    schema = version.get("schema")
    validation = None
    if isinstance(schema, dict):
        validation = OrderedStruct((("OpenAPIV3Schema", schema_struct(schema.get("openAPIV3Schema"))),))
    columns = version.get("additionalPrinterColumns")
    fields = version.get("selectableFields")
    return OrderedStruct(
        (
            ("Name", version.get("name") or ""),
            ("Served", bool(version.get("served"))),
            ("Storage", bool(version.get("storage"))),
            ("Deprecated", bool(version.get("deprecated"))),
            ("DeprecationWarning", version.get("deprecationWarning")),
            ("Schema", validation),
            ("Subresources", _subresources(version.get("subresources"))),
            ("AdditionalPrinterColumns", None if columns is None else [_column(c) for c in columns]),
            (
                "SelectableFields",
                None
                if fields is None
                else [OrderedStruct((("JSONPath", (f or {}).get("jsonPath") or ""),)) for f in fields],
            ),
        )
    )


def versions_struct(versions: list[Object] | None) -> list[OrderedStruct] | None:
    """spec.versions as a bad value ([] stays [], absent is null)."""
    return None if versions is None else [version_struct(v) for v in versions]
