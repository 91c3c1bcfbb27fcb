"""NewStructural and ValidateStructural (schema/convert.go, validation.go, complete.go)."""

from __future__ import annotations

import re

import pytest

from kube_apiserver.apiextensions.schema import (
    Structural,
    StructuralOrBool,
    ValidationOptions,
    new_structural,
    validate_structural,
)
from kube_apiserver.apimachinery.field import Path

DEFAULT_OPTIONS = ValidationOptions()


def errors(schema: dict, opts: ValidationOptions = DEFAULT_OPTIONS) -> list[str]:
    return [str(e) for e in validate_structural(schema, Path("schema"), opts)]


@pytest.mark.parametrize("key, name", [
    ("id", "id"), ("$schema", "schema"), ("$ref", "$ref"), ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"), ("additionalItems", "additionalItems"), ("definitions", "definitions"),
])
def test_unsupported_keywords(key, name):
    value = {"a": {}} if key in ("patternProperties", "dependencies", "definitions") else "x"
    with pytest.raises(ValueError, match=re.escape(f"OpenAPIV3Schema '{name}' is not supported")):
        new_structural({"type": "object", key: value})


def test_conversion_errors():
    with pytest.raises(ValueError, match="'items' must be a schema, but is an array"):
        new_structural({"type": "array", "items": [{"type": "string"}]})
    with pytest.raises(ValueError, match="'x-kubernetes-preserve-unknown-fields' must be true or undefined"):
        new_structural({"type": "object", "x-kubernetes-preserve-unknown-fields": False})


def test_new_structural_shape():
    s = new_structural({
        "type": "object", "properties": {"a": {"type": "string", "default": "x", "maxLength": 3}},
        "additionalProperties": False, "x-kubernetes-validations": [{"rule": "true", "messageExpression": "'m'"}],
        "anyOf": [{"required": ["a"]}],
    })
    assert s.type == "object" and s.properties["a"].default == "x"
    assert s.properties["a"].value_validation.max_length == 3
    assert s.additional_properties == StructuralOrBool(None, False)
    assert s.x_validations[0].message_expression == "'m'"
    assert s.value_validation.any_of[0].value_validation.required == ["a"]
    ap = new_structural({"type": "object", "additionalProperties": {"type": "string"}}).additional_properties
    assert ap.bool and ap.structural.type == "string"


def test_valid_schema_has_no_errors():
    assert errors({
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
            "spec": {"type": "object", "properties": {
                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "port2": {"x-kubernetes-int-or-string": True,
                          "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"minimum": 1}]},
                "list": {"type": "array", "items": {"type": "string"}},
                "any": {"x-kubernetes-preserve-unknown-fields": True},
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True},
            }, "oneOf": [{"required": ["port"]}, {"required": ["list"]}]},
        },
    }) == []


def test_types_must_be_specified():
    assert errors({"properties": {"a": {}, "b": {"type": "array", "items": {}}, "c": {"type": "array"}}}) == [
        "schema.properties[a].type: Required value: must not be empty for specified object fields",
        "schema.properties[b].items.type: Required value: must not be empty for specified array items",
        "schema.properties[c].items: Required value: must be specified",
        "schema.type: Required value: must not be empty at the root",
    ]


def test_root_must_be_object_without_additional_properties():
    assert errors({"type": "string"}) == ['schema.type: Invalid value: "string": must be object at the root']
    assert errors({"type": "object", "additionalProperties": {"type": "string"}}) == [
        "schema.additionalProperties: Forbidden: must not be used at the root"]


def test_forbidden_in_nested_value_validations():
    assert errors({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{
        "type": "string", "default": "x", "title": "t", "description": "d", "nullable": True,
        "x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-embedded-resource": True,
        "x-kubernetes-int-or-string": True, "x-kubernetes-list-type": "set", "x-kubernetes-list-map-keys": ["k"],
        "x-kubernetes-map-type": "atomic", "additionalProperties": {}, "x-kubernetes-validations": [{"rule": "true"}],
        "properties": {"metadata": {}},
    }]}) == [
        "schema.anyOf[0].additionalProperties: Forbidden: must be undefined to be structural",
        "schema.anyOf[0].default: Forbidden: must be undefined to be structural",
        "schema.anyOf[0].description: Forbidden: must be empty to be structural",
        "schema.anyOf[0].nullable: Forbidden: must be false to be structural",
        "schema.anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
        "schema.anyOf[0].title: Forbidden: must be empty to be structural",
        "schema.anyOf[0].type: Forbidden: must be empty to be structural",
        "schema.anyOf[0].x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
        "schema.anyOf[0].x-kubernetes-int-or-string: Forbidden: must be false to be structural",
        "schema.anyOf[0].x-kubernetes-list-map-keys: Forbidden: must be empty to be structural",
        "schema.anyOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural",
        "schema.anyOf[0].x-kubernetes-map-type: Forbidden: must be undefined to be structural",
        "schema.anyOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        "schema.anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
        "schema.properties[metadata]: Required value: because it is defined in schema.anyOf[0].properties[metadata]",
    ]


def test_x_validations_in_all_of_are_forbidden_by_default_only():
    schema = {"type": "object", "allOf": [{"x-kubernetes-validations": [{"rule": "true"}]}]}
    assert errors(schema) == ["schema.allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"]
    assert errors(schema, ValidationOptions(allow_nested_x_validations=True)) == []


def test_extensions():
    assert errors({"type": "object", "properties": {"a": {
        "x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-embedded-resource": True}}}) == [
        "schema.properties[a].type: Required value: must be object if x-kubernetes-embedded-resource is true",
        "schema.properties[a].x-kubernetes-embedded-resource: Invalid value: true: must be false if "
        "x-kubernetes-int-or-string is true",
        "schema.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if "
        "x-kubernetes-int-or-string is true",
    ]
    assert errors({"type": "object", "properties": {"e": {"type": "object", "x-kubernetes-embedded-resource": True}}}) == [
        "schema.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource "
        "is true without x-kubernetes-preserve-unknown-fields"]
    assert errors({"type": "object", "properties": {"e": {"type": "array", "items": {"type": "string"},
                                                          "x-kubernetes-embedded-resource": True,
                                                          "x-kubernetes-preserve-unknown-fields": True}}}) == [
        'schema.properties[e].type: Invalid value: "array": must be object if x-kubernetes-embedded-resource is true']


def test_metadata_restrictions():
    assert errors({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": {"type": "string"}, "generateName": {"type": "string"}}}}}) == []
    assert errors({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "labels": {"type": "object"}}}}}) == [
        "schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, "
        "but metadata is implicitly specified"]
    assert errors({"type": "object", "properties": {"metadata": {"type": "string"}}}) == [
        'schema.properties[metadata].type: Invalid value: "string": must be object']
    assert errors({"type": "object", "properties": {"kind": {"type": "integer"}, "apiVersion": {"type": "object"}}}) == [
        'schema.properties[apiVersion].type: Invalid value: "object": must be string',
        'schema.properties[kind].type: Invalid value: "integer": must be string']


def test_completeness():
    assert errors({"type": "object", "properties": {"a": {"type": "object"}}, "anyOf": [
        {"properties": {"a": {"properties": {"b": {"minLength": 1}}}, "c": {"items": {"minLength": 1}}}}]}) == [
        "schema.properties[a].properties[b]: Required value: because it is defined in "
        "schema.anyOf[0].properties[a].properties[b]",
        "schema.properties[c]: Required value: because it is defined in schema.anyOf[0].properties[c]"]
    # upstream checks completeness of the root's value validations only
    s = {"type": "object", "additionalProperties": {"type": "object", "properties": {"bar": {"type": "string"}}},
         "allOf": [{"properties": {"foo": {"properties": {"bar": {"minLength": 1}}}}}]}
    root_ap = "schema.additionalProperties: Forbidden: must not be used at the root"
    assert errors(s) == [root_ap, "schema.properties[foo]: Required value: because it is defined in "
                                  "schema.allOf[0].properties[foo]"]
    assert errors(s, ValidationOptions(allow_validation_properties_with_additional_properties=True)) == [root_ap]


def test_invalid_pattern():
    assert errors({"type": "object", "properties": {"a": {"type": "string", "pattern": "(abc"}}}) == [
        'schema.properties[a].pattern: Invalid value: "(abc": must be a valid regular expression, but isn\'t: '
        "error parsing regexp: missing closing ): `(abc`"]


def test_structural_accepted_directly():
    s = Structural(type="object", properties={"a": Structural()})
    assert [str(e) for e in validate_structural(s, None)] == [
        "properties[a].type: Required value: must not be empty for specified object fields"]
