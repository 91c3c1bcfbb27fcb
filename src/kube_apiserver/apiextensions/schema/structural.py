"""Structural schemas (apiextensions-apiserver pkg/apiserver/schema: structural.go, convert.go).

A structural schema splits a CRD's OpenAPI v3 schema into the part that describes the shape of
the data (types, properties, items, additionalProperties and the ``x-kubernetes-*`` extensions),
which pruning, defaulting and CEL walk, and the value validations (``ValueValidation``), which
only restrict values. Under ``allOf``/``anyOf``/``oneOf``/``not`` only value validations are
allowed; whatever a nested schema sets beyond them is kept in ``forbidden_generics`` and
``forbidden_extensions`` so that :func:`validate_structural` can report it.

Objects are plain ``dict``s parsed from a JSONSchemaProps (v1 JSON field names). ``default: null``
is the same as no default, as in Go where both decode to a nil interface.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ValidationRule:
    """One ``x-kubernetes-validations`` entry."""

    rule: str = ""
    message: str = ""
    message_expression: str = ""
    reason: str | None = None
    field_path: str = ""
    optional_old_self: bool | None = None


@dataclass(slots=True)
class Generic:
    """Generic keywords; allowed only in the structural part of a schema."""

    description: str = ""
    type: str = ""
    title: str = ""
    default: Any = None
    nullable: bool = False
    external_docs: dict[str, Any] | None = None
    example: Any = None


@dataclass(slots=True)
class Extensions:
    """The ``x-kubernetes-*`` vendor extensions that shape data."""

    x_preserve_unknown_fields: bool = False
    x_embedded_resource: bool = False
    x_int_or_string: bool = False
    x_list_map_keys: list[str] | None = None
    x_list_type: str | None = None
    x_map_type: str | None = None


@dataclass(slots=True)
class ValueValidation:
    """Value validations: allowed everywhere, including under logical junctors."""

    format: str = ""
    maximum: float | None = None
    exclusive_maximum: bool = False
    minimum: float | None = None
    exclusive_minimum: bool = False
    max_length: int | None = None
    min_length: int | None = None
    pattern: str = ""
    max_items: int | None = None
    min_items: int | None = None
    unique_items: bool = False
    multiple_of: float | None = None
    enum: list[Any] | None = None
    max_properties: int | None = None
    min_properties: int | None = None
    required: list[str] | None = None
    all_of: list[NestedValueValidation] | None = None
    one_of: list[NestedValueValidation] | None = None
    any_of: list[NestedValueValidation] | None = None
    not_: NestedValueValidation | None = None


@dataclass(slots=True)
class NestedValueValidation:
    """A schema under allOf/anyOf/oneOf/not: value validations plus what it must not set."""

    value_validation: ValueValidation = field(default_factory=ValueValidation)
    x_validations: list[ValidationRule] | None = None
    items: NestedValueValidation | None = None
    properties: dict[str, NestedValueValidation] | None = None
    additional_properties: NestedValueValidation | None = None
    forbidden_generics: Generic = field(default_factory=Generic)
    forbidden_extensions: Extensions = field(default_factory=Extensions)


@dataclass(slots=True)
class StructuralOrBool:
    """``additionalProperties``: a schema (then ``bool`` is True) or a bare boolean."""

    structural: Structural | None = None
    bool: bool = False


@dataclass(slots=True)
class Structural:
    """A structural schema node (Go's ``schema.Structural``, with Generic/Extensions inlined)."""

    items: Structural | None = None
    properties: dict[str, Structural] | None = None
    additional_properties: StructuralOrBool | None = None
    # Generic
    description: str = ""
    type: str = ""
    title: str = ""
    default: Any = None
    nullable: bool = False
    external_docs: dict[str, Any] | None = None
    example: Any = None
    # Extensions
    x_preserve_unknown_fields: bool = False
    x_embedded_resource: bool = False
    x_int_or_string: bool = False
    x_list_map_keys: list[str] | None = None
    x_list_type: str | None = None
    x_map_type: str | None = None
    # ValidationExtensions
    x_validations: list[ValidationRule] | None = None
    value_validation: ValueValidation | None = None
    # the JSONSchemaProps this node was built from (for the OpenAPI validator and CEL values)
    raw: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    # facts derived from the subtree, computed on first use (see derived.py)
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def clone(self) -> Structural:
        """A shallow copy (Go's ``clone := *s``), with its own derived-data cache."""
        return Structural(**{name: getattr(self, name) for name in _STRUCTURAL_FIELDS})


_STRUCTURAL_FIELDS = tuple(name for name in Structural.__dataclass_fields__ if name != "cache")

_UNSUPPORTED = (
    ("id", "id"), ("$schema", "schema"), ("$ref", "$ref"), ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"), ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
)


def new_structural(props: dict[str, Any] | None) -> Structural | None:
    """``NewStructural``: the structural view of a JSONSchemaProps dict.

    Raises ValueError (with upstream's message) where no structural schema can represent it.
    """
    if props is None:
        return None
    _check_unsupported(props)
    node = Structural(value_validation=_value_validation(props),
                      x_validations=_validation_rules(props), raw=props)
    _set_generics(node, props)
    _set_extensions(node, props)
    items = props.get("items")
    if items is not None:
        if isinstance(items, list):
            raise ValueError("OpenAPIV3Schema 'items' must be a schema, but is an array")
        node.items = new_structural(items)
    properties = props.get("properties")
    if properties:
        node.properties = {k: _required_structural(v) for k, v in properties.items()}
    additional = props.get("additionalProperties")
    if additional is not None:
        if isinstance(additional, dict):
            node.additional_properties = StructuralOrBool(new_structural(additional), True)
        else:
            node.additional_properties = StructuralOrBool(None, bool(additional))
    return node


def _required_structural(props: dict[str, Any]) -> Structural:
    node = new_structural(props or {})
    assert node is not None
    return node


def _check_unsupported(props: dict[str, Any]) -> None:
    for key, name in _UNSUPPORTED:
        if props.get(key):
            raise ValueError(f"OpenAPIV3Schema '{name}' is not supported")


def _set_generics(target: Structural | Generic, props: dict[str, Any]) -> None:
    target.type = props.get("type") or ""
    target.description = props.get("description") or ""
    target.title = props.get("title") or ""
    target.nullable = bool(props.get("nullable"))
    target.default = props.get("default")
    target.external_docs = props.get("externalDocs")
    target.example = props.get("example")


def _set_extensions(target: Structural | Extensions, props: dict[str, Any]) -> None:
    target.x_embedded_resource = bool(props.get("x-kubernetes-embedded-resource"))
    target.x_int_or_string = bool(props.get("x-kubernetes-int-or-string"))
    target.x_list_map_keys = props.get("x-kubernetes-list-map-keys") or None
    target.x_list_type = props.get("x-kubernetes-list-type")
    target.x_map_type = props.get("x-kubernetes-map-type")
    preserve = props.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None:
        if not preserve:
            raise ValueError(
                "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
        target.x_preserve_unknown_fields = True


def _validation_rules(props: dict[str, Any]) -> list[ValidationRule] | None:
    rules = props.get("x-kubernetes-validations")
    if not rules:
        return None
    return [ValidationRule(
        rule=r.get("rule") or "", message=r.get("message") or "",
        message_expression=r.get("messageExpression") or "", reason=r.get("reason"),
        field_path=r.get("fieldPath") or "", optional_old_self=r.get("optionalOldSelf"),
    ) for r in rules]


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _value_validation(props: dict[str, Any]) -> ValueValidation:
    g = props.get
    vv = ValueValidation(
        format=g("format") or "", maximum=_number(g("maximum")),
        exclusive_maximum=bool(g("exclusiveMaximum")), minimum=_number(g("minimum")),
        exclusive_minimum=bool(g("exclusiveMinimum")), max_length=g("maxLength"),
        min_length=g("minLength"), pattern=g("pattern") or "", max_items=g("maxItems"),
        min_items=g("minItems"), unique_items=bool(g("uniqueItems")),
        multiple_of=_number(g("multipleOf")), max_properties=g("maxProperties"),
        min_properties=g("minProperties"), required=g("required") or None,
        enum=list(g("enum")) if g("enum") else None,
    )
    vv.not_ = _nested(g("not"))
    vv.all_of = [_required_nested(x) for x in g("allOf") or ()] or None
    vv.any_of = [_required_nested(x) for x in g("anyOf") or ()] or None
    vv.one_of = [_required_nested(x) for x in g("oneOf") or ()] or None
    return vv


def _required_nested(props: dict[str, Any]) -> NestedValueValidation:
    node = _nested(props or {})
    assert node is not None
    return node


def _nested(props: dict[str, Any] | None) -> NestedValueValidation | None:
    if props is None:
        return None
    _check_unsupported(props)
    generics, extensions = Generic(), Extensions()
    _set_generics(generics, props)
    _set_extensions(extensions, props)
    node = NestedValueValidation(
        value_validation=_value_validation(props), x_validations=_validation_rules(props),
        forbidden_generics=generics, forbidden_extensions=extensions)
    items = props.get("items")
    if items is not None:
        if isinstance(items, list):
            raise ValueError("OpenAPIV3Schema 'items' must be a schema, but is an array")
        node.items = _nested(items)
    if props.get("properties") is not None:
        node.properties = {k: _required_nested(v) for k, v in props["properties"].items()}
    additional = props.get("additionalProperties")
    if isinstance(additional, dict):
        node.additional_properties = _nested(additional)
    elif additional:
        node.additional_properties = NestedValueValidation()
    return node


def nested_to_structural(nested: NestedValueValidation | None) -> Structural | None:
    """``nestedToStructural``: a nested value validation seen as a structural node (for CEL allOf)."""
    if nested is None:
        return None
    g, x = nested.forbidden_generics, nested.forbidden_extensions
    node = Structural(
        value_validation=nested.value_validation, x_validations=nested.x_validations,
        items=nested_to_structural(nested.items), type=g.type, description=g.description,
        title=g.title, default=g.default, nullable=g.nullable,
        x_preserve_unknown_fields=x.x_preserve_unknown_fields,
        x_embedded_resource=x.x_embedded_resource, x_int_or_string=x.x_int_or_string,
        x_list_map_keys=x.x_list_map_keys, x_list_type=x.x_list_type, x_map_type=x.x_map_type)
    if nested.properties:
        node.properties = {k: nested_to_structural(v) for k, v in nested.properties.items()}  # type: ignore[misc]
    if nested.additional_properties is not None:
        node.additional_properties = StructuralOrBool(nested_to_structural(nested.additional_properties))
    return node


def to_kube_openapi(s: Structural | None) -> dict[str, Any] | None:
    """``Structural.ToKubeOpenAPI`` as a JSONSchemaProps-like dict for the OpenAPI validator.

    Like upstream, int-or-string stays an extension (no type) and formats are kept as written.
    """
    if s is None:
        return None
    out: dict[str, Any] = {}
    if s.items is not None:
        out["items"] = to_kube_openapi(s.items)
    if s.properties is not None:
        out["properties"] = {k: to_kube_openapi(v) for k, v in s.properties.items()}
    if s.additional_properties is not None:
        ap = s.additional_properties
        out["additionalProperties"] = to_kube_openapi(ap.structural) if ap.structural is not None else ap.bool
    if s.type:
        out["type"] = s.type
    if s.nullable:
        out["nullable"] = True
    _value_validation_props(s.value_validation, out)
    return out


_VV_KEYS = (
    ("format", "format"), ("maximum", "maximum"), ("exclusive_maximum", "exclusiveMaximum"),
    ("minimum", "minimum"), ("exclusive_minimum", "exclusiveMinimum"), ("max_length", "maxLength"),
    ("min_length", "minLength"), ("pattern", "pattern"), ("max_items", "maxItems"), ("min_items", "minItems"),
    ("unique_items", "uniqueItems"), ("multiple_of", "multipleOf"), ("enum", "enum"),
    ("max_properties", "maxProperties"), ("min_properties", "minProperties"), ("required", "required"),
)


def _value_validation_props(vv: ValueValidation | None, out: dict[str, Any]) -> None:
    if vv is None:
        return
    for attr, key in _VV_KEYS:
        value = getattr(vv, attr)
        if not (value is None or value is False or value == ""):  # 0 is a real limit
            out[key] = value
    for attr, key in (("all_of", "allOf"), ("any_of", "anyOf"), ("one_of", "oneOf")):
        nested = getattr(vv, attr)
        if nested:
            out[key] = [_nested_props(n) for n in nested]
    if vv.not_ is not None:
        out["not"] = _nested_props(vv.not_)


def _nested_props(vv: NestedValueValidation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _value_validation_props(vv.value_validation, out)
    if vv.items is not None:
        out["items"] = _nested_props(vv.items)
    if vv.properties is not None:
        out["properties"] = {k: _nested_props(v) for k, v in vv.properties.items()}
    if vv.forbidden_generics.type:
        out["type"] = vv.forbidden_generics.type
    if vv.forbidden_generics.nullable:
        out["nullable"] = True
    return out
