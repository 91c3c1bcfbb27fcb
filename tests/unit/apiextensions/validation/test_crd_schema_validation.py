"""validateCustomResourceDefinitionValidation cases ported from upstream
TestValidateCustomResourceDefinitionValidation (same inputs, options, paths and error types)."""

from __future__ import annotations

from typing import Any

import pytest
from crdtestutil import FORBIDDEN, GO_ZERO, INVALID, REQUIRED, UNSUPPORTED, assert_errors

from kube_apiserver.apiextensions.validation.celcheck import uses_old_self_text
from kube_apiserver.apiextensions.validation.crvalidation import validate_custom_resource_validation
from kube_apiserver.apimachinery.field import Path

ROOT = "spec.validation.openAPIV3Schema"
STRUCTURAL = GO_ZERO.with_(require_structural_schema=True)
MAP_SET = GO_ZERO.with_(require_map_list_keys_map_set_validation=True)
ATOMIC_SET = GO_ZERO.with_(require_atomic_set_type=True)


def run(schema: dict[str, Any] | None, opts: Any = GO_ZERO, status: bool = False) -> list[Any]:
    validation = {} if schema is None else {"openAPIV3Schema": schema}
    return validate_custom_resource_validation(validation, status, opts, Path("spec", "validation"))


def list_map(items: dict[str, Any] | list[Any] | None = None, keys: list[str] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "array", "x-kubernetes-list-type": "map"}
    if keys is not None:
        s["x-kubernetes-list-map-keys"] = keys
    if items is not None:
        s["items"] = items
    return s


CASES: list[tuple[str, dict[str, Any] | None, Any, bool, tuple[tuple[str, str], ...]]] = [
    ("empty", None, GO_ZERO, False, ()),
    ("empty with status", None, GO_ZERO, True, ()),
    ("root type without status", {"type": "string"}, GO_ZERO, False, ()),
    ("root type having invalid value, with status", {"type": "string"}, GO_ZERO, True, ((INVALID, f"{ROOT}.type"),)),
    ("non-allowed root field with status", {"anyOf": [{"description": "First schema"}, {"description": "Second"}]},
     GO_ZERO, True, ((INVALID, ROOT),)),
    ("null type", {"properties": {"null": {"type": "null"}}}, GO_ZERO, False,
     ((FORBIDDEN, f"{ROOT}.properties[null].type"),)),
    ("nullable at the root", {"type": "object", "nullable": True}, GO_ZERO, False, ((FORBIDDEN, f"{ROOT}.nullable"),)),
    ("nullable without type", {"properties": {"nullable": {"nullable": True}}}, GO_ZERO, False, ()),
    ("nullable with types", {"properties": {t: {"type": t, "nullable": True}
                                            for t in ("object", "array", "number", "string")}}, GO_ZERO, False, ()),
    ("must be structural, but isn't", {}, STRUCTURAL, False, ((REQUIRED, f"{ROOT}.type"),)),
    ("must be structural", {"type": "object"}, STRUCTURAL, False, ()),
    ("require valid types, invalid null", {"type": "null"},
     STRUCTURAL.with_(require_valid_property_type=True), False,
     ((UNSUPPORTED, f"{ROOT}.type"), (FORBIDDEN, f"{ROOT}.type"), (INVALID, f"{ROOT}.type"))),
    ("require valid types, invalid bogus", {"type": "bogus"}, STRUCTURAL.with_(require_valid_property_type=True), False,
     ((UNSUPPORTED, f"{ROOT}.type"), (INVALID, f"{ROOT}.type"))),
    ("invalid type with list type extension set", {"type": "object", "x-kubernetes-list-type": "set"}, GO_ZERO,
     False, ((INVALID, f"{ROOT}.type"),)),
    ("unset type with list type extension set", {"x-kubernetes-list-type": "set"}, GO_ZERO, False,
     ((REQUIRED, f"{ROOT}.type"),)),
    ("invalid list type extension", {"type": "array", "x-kubernetes-list-type": "invalid"}, GO_ZERO, False,
     ((UNSUPPORTED, f"{ROOT}.x-kubernetes-list-type"),)),
    ("invalid list type with map keys", {"type": "array", "x-kubernetes-list-type": "set",
                                         "x-kubernetes-list-map-keys": ["key"]}, GO_ZERO, False,
     ((INVALID, f"{ROOT}.x-kubernetes-list-type"),)),
    ("unset list type with map keys", {"x-kubernetes-list-map-keys": ["key"]}, GO_ZERO, False,
     ((REQUIRED, f"{ROOT}.x-kubernetes-list-type"),)),
    ("empty list map keys with list type map", list_map(), GO_ZERO, False,
     ((REQUIRED, f"{ROOT}.x-kubernetes-list-map-keys"), (REQUIRED, f"{ROOT}.items"))),
    ("no items schema with list type map", list_map(keys=["key"]), GO_ZERO, False, ((REQUIRED, f"{ROOT}.items"),)),
    ("multiple schema items with list type map", list_map([{"type": "string"}, {"type": "integer"}], ["key"]),
     GO_ZERO, False, ((FORBIDDEN, f"{ROOT}.items"), (INVALID, f"{ROOT}.items"))),
    ("non object item with list type map", list_map({"type": "string"}, ["key"]), GO_ZERO, False,
     ((INVALID, f"{ROOT}.items.type"),)),
    ("items with key missing from properties", list_map({"type": "object"}, ["key"]), GO_ZERO, False,
     ((INVALID, f"{ROOT}.x-kubernetes-list-map-keys"),)),
    ("items with non scalar key property", list_map({"type": "object", "properties": {"key": {"type": "object"}}},
                                                    ["key"]), GO_ZERO, False,
     ((INVALID, f"{ROOT}.items.properties[key].type"),)),
    ("duplicate map keys", list_map({"type": "object", "properties": {"key": {"type": "string"}}}, ["key", "key"]),
     GO_ZERO, False, ((INVALID, f"{ROOT}.x-kubernetes-list-map-keys"),)),
    ("allowed schema with list type map", list_map({"type": "object", "properties": {
        "keyA": {"type": "string"}, "keyB": {"type": "integer"}}}, ["keyA", "keyB"]), GO_ZERO, False, ()),
    ("allowed list-type atomic with non-atomic items", {"type": "array", "x-kubernetes-list-type": "atomic",
                                                        "items": {"type": "object", "properties": {}}},
     GO_ZERO, False, ()),
    ("allowed list-type set with atomic map items", {"type": "array", "x-kubernetes-list-type": "set", "items": {
        "type": "object", "x-kubernetes-map-type": "atomic", "properties": {"foo": {"type": "string"}}}},
     ATOMIC_SET, False, ()),
    ("invalid list-type set with non-atomic map items", {"type": "array", "x-kubernetes-list-type": "set", "items": {
        "type": "object", "x-kubernetes-map-type": "granular", "properties": {"foo": {"type": "string"}}}},
     ATOMIC_SET, False, ((INVALID, f"{ROOT}.items.x-kubernetes-map-type"),)),
    ("invalid list-type set with unspecified map-type", {"type": "array", "x-kubernetes-list-type": "set", "items": {
        "type": "object", "properties": {"foo": {"type": "string"}}}},
     ATOMIC_SET, False, ((INVALID, f"{ROOT}.items.x-kubernetes-map-type"),)),
    ("allowed list-type set with unspecified list-type in list items", {
        "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "array", "items": {"type": "string"}}},
     ATOMIC_SET, False, ()),
    ("invalid list-type set with non-atomic list items", {
        "type": "array", "x-kubernetes-list-type": "set",
        "items": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}},
     ATOMIC_SET, False, ((INVALID, f"{ROOT}.items.x-kubernetes-list-type"),)),
    ("invalid type with map type (granular)", {"type": "array", "x-kubernetes-map-type": "granular"}, GO_ZERO, False,
     ((INVALID, f"{ROOT}.type"),)),
    ("unset type with map type (atomic)", {"x-kubernetes-map-type": "atomic"}, GO_ZERO, False,
     ((REQUIRED, f"{ROOT}.type"),)),
    ("invalid map type", {"type": "object", "x-kubernetes-map-type": "badMapType"}, GO_ZERO, False,
     ((UNSUPPORTED, f"{ROOT}.x-kubernetes-map-type"),)),
    ("invalid map with non-required key and no default", list_map({"type": "object", "properties": {
        "key": {"type": "string"}}}, ["key"]), MAP_SET, False,
     ((REQUIRED, f"{ROOT}.items.properties[key].default"),)),
    ("allowed map with required key and no default", list_map({"type": "object", "required": ["key"], "properties": {
        "key": {"type": "string"}}}, ["key"]), MAP_SET, False, ()),
    ("allowed map with non-required key and default", list_map({"type": "object", "properties": {
        "key": {"type": "string", "default": "stuff"}}}, ["key"]), MAP_SET.with_(allow_defaults=True), False, ()),
    ("invalid map with nullable key", list_map({"type": "object", "properties": {
        "key": {"type": "string", "nullable": True}}}, ["key"]), MAP_SET, False,
     ((REQUIRED, f"{ROOT}.items.properties[key].default"), (FORBIDDEN, f"{ROOT}.items.properties[key].nullable"))),
    ("invalid map with nullable items", list_map({"type": "object", "nullable": True, "properties": {
        "key": {"type": "string"}}}, ["key"]), MAP_SET, False,
     ((FORBIDDEN, f"{ROOT}.items.nullable"), (REQUIRED, f"{ROOT}.items.properties[key].default"))),
    ("defaults forbidden without allowDefaults", list_map({"type": "object", "required": ["a", "c"], "properties": {
        "key": {"type": "string"}, "a": {"type": "string"}, "b": {"type": "string", "default": "stuff"},
        "c": {"type": "int"}}}, ["a"]), MAP_SET, False, ((FORBIDDEN, f"{ROOT}.items.properties[b].default"),)),
    ("invalid set with nullable items", {"type": "array", "x-kubernetes-list-type": "set", "items": {
        "nullable": True}}, MAP_SET, False, ((FORBIDDEN, f"{ROOT}.items.nullable"),)),
    ("invalid x-kubernetes-validations with empty rule", {"type": "object", "x-kubernetes-validations": [
        {"message": "empty rule"}]}, STRUCTURAL, False, ((REQUIRED, f"{ROOT}.x-kubernetes-validations[0].rule"),)),
    ("rule is empty or not specified", {"type": "object", "properties": {"value": {
        "type": "integer", "x-kubernetes-validations": [{"message": "something"}, {"rule": "   ", "message": "x"}]}}},
     GO_ZERO, False, ((REQUIRED, f"{ROOT}.properties[value].x-kubernetes-validations[0].rule"),
                      (REQUIRED, f"{ROOT}.properties[value].x-kubernetes-validations[1].rule"))),
    ("multiline rule with message", {"type": "object", "properties": {"value": {
        "type": "integer", "x-kubernetes-validations": [{"rule": "self >= 0 &&\nself <= 100", "message": "m"}]}}},
     GO_ZERO, False, ()),
    ("invalid and required messages", {"type": "object", "properties": {"value": {
        "type": "integer", "x-kubernetes-validations": [
            {"rule": "self >= 0 &&\nself <= 100"},
            {"rule": "self == 50", "message": "value requirements:\nmust be >= 0\nmust be <= 100 "},
            {"rule": "self == 50", "message": " "}]}}}, GO_ZERO, False,
     ((REQUIRED, f"{ROOT}.properties[value].x-kubernetes-validations[0].message"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[1].message"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[2].message"))),
    ("forbid transition rule on element of list of type atomic", {"type": "object", "properties": {"value": {
        "type": "array", "x-kubernetes-list-type": "atomic", "items": {
            "type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}},
     STRUCTURAL, False, ((INVALID, f"{ROOT}.properties[value].items.x-kubernetes-validations[0].rule"),)),
    ("allow transition rule on list of type atomic", {"type": "object", "properties": {"value": {
        "type": "array", "maxItems": 10, "x-kubernetes-list-type": "atomic", "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}, STRUCTURAL, False, ()),
    ("allow transition rule on element of list of type map", {"type": "object", "properties": {"value": {
        "type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 5}},
                  "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}, STRUCTURAL, False, ()),
    ("forbid transition rule on element of map of unrecognized type", {"type": "object", "properties": {"value": {
        "type": "object", "x-kubernetes-map-type": "future", "properties": {"subfield": {
            "type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}},
     STRUCTURAL, False, ((UNSUPPORTED, f"{ROOT}.properties[value].x-kubernetes-map-type"),
                         (INVALID, f"{ROOT}.properties[value].properties[subfield].x-kubernetes-validations[0].rule"))),
    ("forbid setting optionalOldSelf if oldSelf is not used", {"type": "object", "properties": {"value": {
        "type": "string", "maxLength": 10,
        "x-kubernetes-validations": [{"rule": "self == 'foo'", "optionalOldSelf": True}]}}}, STRUCTURAL, False,
     ((INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[0].optionalOldSelf"),)),
    ("x-kubernetes-validations reason and fieldPath", {"type": "object", "properties": {"value": {
        "type": "object", "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "true", "reason": "Bogus", "fieldPath": ".b"},
                                     {"rule": "true", "fieldPath": " "},
                                     {"rule": "true", "fieldPath": ".a\n"}]}}}, GO_ZERO, False,
     ((UNSUPPORTED, f"{ROOT}.properties[value].x-kubernetes-validations[0].reason"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[0].fieldPath"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[1].fieldPath"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[1].fieldPath"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[2].fieldPath"),
      (INVALID, f"{ROOT}.properties[value].x-kubernetes-validations[2].fieldPath"))),
]


@pytest.mark.parametrize(("schema", "opts", "status", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_custom_resource_validation(schema: Any, opts: Any, status: bool, expected: Any) -> None:
    assert_errors(run(schema, opts, status), *expected)


def test_forbidden_openapi_keywords() -> None:
    schema = {"type": "object", "id": "x", "$ref": "#/definitions/a", "uniqueItems": True,
              "additionalItems": False, "dependencies": {"a": ["b"]}, "patternProperties": {"^a": {"type": "string"}},
              "definitions": {"a": {"type": "string"}}}
    errs = run(schema, GO_ZERO)
    assert sorted(str(e) for e in errs) == sorted([
        f"{ROOT}.$ref: Forbidden: $ref is not supported",
        f"{ROOT}.additionalItems: Forbidden: additionalItems is not supported",
        f"{ROOT}.definitions: Forbidden: definitions is not supported",
        f"{ROOT}.dependencies: Forbidden: dependencies is not supported",
        f"{ROOT}.id: Forbidden: id is not supported",
        f"{ROOT}.patternProperties: Forbidden: patternProperties is not supported",
        f"{ROOT}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes "
        "quadratic",
    ])


def test_structural_init_error_only_shown_alone() -> None:
    # NewStructural fails on $schema, which the schema walk does not forbid: its error is the only one
    errs = run({"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"}, STRUCTURAL)
    assert [str(e) for e in errs] == [f'{ROOT}: Invalid value: "": OpenAPIV3Schema \'schema\' is not supported']
    # ... and hidden behind the walk's own errors when there are some
    errs = run({"type": "object", "id": "x"}, STRUCTURAL)
    assert [str(e) for e in errs] == [f"{ROOT}.id: Forbidden: id is not supported"]


def test_status_root_messages() -> None:
    errs = run({"type": "string"}, GO_ZERO, status=True)
    assert [str(e) for e in errs] == [f'{ROOT}.type: Invalid value: "string": only "object" is allowed as the type '
                                      "at the root of the schema if the status subresource is enabled"]
    errs = run({"type": "object", "minProperties": 1}, GO_ZERO, status=True)
    assert len(errs) == 1 and errs[0].field == ROOT
    assert str(errs[0]).endswith("only [Description Type Format Title Maximum ExclusiveMaximum Minimum "
                                 "ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems "
                                 "MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields "
                                 "XValidations] fields are allowed at the root of the schema if the status "
                                 "subresource is enabled")
    assert '{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object"' in str(errs[0])


def test_metadata_defaults_forbidden() -> None:
    schema = {"type": "object", "properties": {
        "metadata": {"type": "object", "default": {"name": "x"}},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {
            "metadata": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}}}}}}
    errs = run(schema, GO_ZERO.with_(allow_defaults=True))
    assert sorted(str(e) for e in errs) == [
        f"{ROOT}.properties[embedded].properties[metadata].additionalProperties.default: Forbidden: must not be set "
        "inside additionalProperties applying to object metadata",
        f"{ROOT}.properties[metadata].default: Forbidden: must not be set in top-level metadata",
    ]


def test_embedded_resource_inside_resource_meta() -> None:
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "x": {"type": "object", "x-kubernetes-embedded-resource": True}}}}}
    assert_errors(run(schema), (FORBIDDEN, f"{ROOT}.properties[metadata].properties[x].x-kubernetes-embedded-resource"))


def test_additional_properties_and_properties() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                                     "additionalProperties": {"type": "string"}}}}
    assert [str(e) for e in run(schema)] == [f"{ROOT}.properties[a].additionalProperties: Forbidden: "
                                             "additionalProperties and properties are mutual exclusive"]
    schema["properties"]["a"]["additionalProperties"] = True
    assert run(schema) == []


def test_preserve_unknown_fields_false() -> None:
    errs = run({"type": "object", "x-kubernetes-preserve-unknown-fields": False})
    assert [str(e) for e in errs] == [f"{ROOT}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be "
                                      "true or undefined"]


def test_uncorrelatable_message() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "array", "items": {
        "type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}
    errs = run(schema, STRUCTURAL)
    assert [str(e) for e in errs] == [
        f'{ROOT}.properties[value].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
        f"oldSelf cannot be used on the uncorrelatable portion of the schema within {ROOT}.properties[value]"]


@pytest.mark.parametrize(("rule", "uses"), [
    ("self == oldSelf", True), ("oldSelf.x > 1", True), ("self.oldSelf == 1", False),
    ("self == 'oldSelf'", False), ('self == "a" || oldSelf == self', True), ("has(self.oldSelfish)", False),
])
def test_uses_old_self(rule: str, uses: bool) -> None:
    assert uses_old_self_text(rule) is uses


# --- CEL (x-kubernetes-validations compiled through the schema package) -----------------------------

CEL_CASES: list[tuple[str, dict[str, Any], tuple[tuple[str, str], ...]]] = [
    ("forbid double-nested rule with no limit set", {"type": "object", "properties": {"value": {
        "type": "array", "items": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}}},
        "x-kubernetes-validations": [{"rule": "self.all(x, x.all(y, x[y].key == x[y].key))"}]}}},
     ((FORBIDDEN, f"{ROOT}.properties[value].x-kubernetes-validations[0].rule"),
      (FORBIDDEN, f"{ROOT}.properties[value].x-kubernetes-validations[0].rule"), (FORBIDDEN, ROOT))),
    ("forbid validation rules where cost total exceeds total limit", {"type": "object", "properties": {
        "list": {"type": "array", "maxItems": 100000, "items": {
            "type": "string", "maxLength": 5000, "x-kubernetes-validations": [{"rule": "self.contains('keyword')"}]}},
        "map": {"type": "object", "maxProperties": 1000, "additionalProperties": {
            "type": "string", "maxLength": 5000, "x-kubernetes-validations": [{"rule": "self.contains('keyword')"}]}},
        "field": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 50 && self < 100"}]}}},
     ((FORBIDDEN, f"{ROOT}.properties[list].items.x-kubernetes-validations[0].rule"),
      (FORBIDDEN, f"{ROOT}.properties[list].items.x-kubernetes-validations[0].rule"),
      (FORBIDDEN, f"{ROOT}.properties[map].additionalProperties.x-kubernetes-validations[0].rule"),
      (FORBIDDEN, ROOT))),
    ("check for cardinality of 1 under root object", {"type": "object", "properties": {"value": {
        "type": "integer", "x-kubernetes-validations": [{"rule": "self < 1024"}]}}}, ()),
    ("skip CEL when the schema is not structural", {
        "type": "object", "properties": {"field": {"type": "integer"}}, "additionalProperties": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self.x >"}]},
     ((FORBIDDEN, f"{ROOT}.additionalProperties"), (FORBIDDEN, f"{ROOT}.additionalProperties"))),
    ("skip CEL when the schema is invalid at a level below", {"type": "object", "properties": {"field": {
        "type": "object", "properties": {"field": {"type": "integer"}}, "additionalProperties": {"type": "string"}}},
        "x-kubernetes-validations": [{"rule": "self.x >"}]},
     ((FORBIDDEN, f"{ROOT}.properties[field].additionalProperties"),)),
    ("do not skip CEL for an invalid separate part of the tree", {"type": "object", "properties": {
        "a": {"type": "object", "properties": {"field": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
        "b": {"type": "object", "properties": {"field": {"type": "integer"}},
              "x-kubernetes-validations": [{"rule": "self.x >"}]}}},
     ((FORBIDDEN, f"{ROOT}.properties[a].additionalProperties"),
      (INVALID, f"{ROOT}.properties[b].x-kubernetes-validations[0].rule"))),
    ("do not skip CEL when the schema is invalid at a level above", {"type": "object", "properties": {"a": {
        "type": "object", "additionalProperties": {"type": "string"},
        "properties": {"b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == "}]}}}}},
     ((FORBIDDEN, f"{ROOT}.properties[a].additionalProperties"),
      (INVALID, f"{ROOT}.properties[a].properties[b].x-kubernetes-validations[0].rule"))),
    ("messageExpression syntax error", {"type": "object", "properties": {"a": {
        "type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == 'x'",
                                                                          "messageExpression": "'bad"}]}}},
     ((INVALID, f"{ROOT}.properties[a].x-kubernetes-validations[0].messageExpression"),)),
    ("rules under allOf are not compiled", {"type": "object", "properties": {"a": {
        "type": "string", "allOf": [{"x-kubernetes-validations": [{"rule": "self =="}]}]}}},
     ((FORBIDDEN, f"{ROOT}.properties[a].allOf[0].x-kubernetes-validations"),)),
]


@pytest.mark.parametrize(("schema", "expected"), [c[1:] for c in CEL_CASES], ids=[c[0] for c in CEL_CASES])
def test_cel_rules(schema: dict[str, Any], expected: Any) -> None:
    assert_errors(run(schema, STRUCTURAL), *expected)


def test_cel_compile_error_message() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-validations": [
        {"rule": "self >", "message": "m"}]}}}
    errs = run(schema, STRUCTURAL)
    assert len(errs) == 1
    assert str(errs[0]).startswith(
        f'{ROOT}.properties[a].x-kubernetes-validations[0].rule: Invalid value: {{"Rule":"self \\u003e","Message":"m",'
        '"MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ')


def test_cost_limit_suppressed_for_unchanged_versions() -> None:
    schema = CEL_CASES[0][1]
    errs = run(schema, STRUCTURAL.with_(suppress_per_expression_cost=True))
    # the per-rule limit is not re-applied; the whole-schema total still is
    assert_errors(errs, (FORBIDDEN, f"{ROOT}.properties[value].x-kubernetes-validations[0].rule"), (FORBIDDEN, ROOT))
    assert "contributed to estimated rule cost total" in str(errs[0])
