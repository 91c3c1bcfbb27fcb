"""Default value checks (defaulting/validation.go and the CRD validation cases that exercise it)
and the CRD-time compilation of x-kubernetes-validations (celcheck)."""

from __future__ import annotations

from kube_apiserver.apiextensions.schema import (
    compile_rules,
    new_structural,
    prune_defaults,
    validate_defaults,
)
from kube_apiserver.apimachinery.field import Path

OBJ = {"type": "object"}
STRING = {"type": "string"}
ROOT = Path("spec", "validation", "openAPIV3Schema")


def default_errs(schema: dict, **kwargs: object) -> list[tuple[str, str]]:
    return [(e.field, e.type.value) for e in validate_defaults(ROOT, new_structural(schema), True, **kwargs)]


def messages(schema: dict) -> list[str]:
    return [str(e) for e in validate_defaults(ROOT, new_structural(schema))]


BASE = "spec.validation.openAPIV3Schema"


def test_defaults_must_validate_and_be_pruned():
    schema = {**OBJ, "properties": {
        "a": {**OBJ, "properties": {"foo": STRING}, "default": {"foo": "abc", "bar": 42}},
        "b": {**OBJ, "properties": {"foo": STRING}, "default": {"foo": "abc"}},
        "c": {**OBJ, "properties": {"foo": STRING}, "default": {"foo": 42}},
        "d": {**OBJ, "properties": {"good": {**STRING, "pattern": "a"}, "bad": {**STRING, "pattern": "b"}},
              "default": {"good": "a", "bad": "a"}},
        "e": {**OBJ, "x-kubernetes-preserve-unknown-fields": True, "properties": {
            "preserveUnknownFields": {**OBJ, "default": {"foo": "abc", "bar": 42}},
            "nestedProperties": {**OBJ, "properties": {"foo": STRING}, "default": {"foo": "abc", "bar": 42}}}},
        "embedded-fine": {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {"foo": STRING}, "default": {
            "foo": "abc", "apiVersion": "foo/v1", "kind": "v1", "metadata": {"name": "foo"}}},
        "embedded-preserve": {**OBJ, "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True,
                              "properties": {"foo": STRING}, "default": {
                                  "foo": "abc", "apiVersion": "foo/v1", "kind": "v1",
                                  "metadata": {"name": "foo", "unspecified": "bar"}, "bar": 42}},
    }}
    assert default_errs(schema) == [
        (f"{BASE}.properties[a].default", "FieldValueInvalid"),
        (f"{BASE}.properties[c].default.foo", "FieldValueTypeInvalid"),
        (f"{BASE}.properties[d].default.bad", "FieldValueInvalid"),
        (f"{BASE}.properties[e].properties[preserveUnknownFields].default", "FieldValueInvalid"),
        (f"{BASE}.properties[e].properties[nestedProperties].default", "FieldValueInvalid"),
    ]
    assert messages(schema)[0] == (f'{BASE}.properties[a].default: Invalid value: {{"bar":42,"foo":"abc"}}: '
                                   "must not have unknown fields")
    assert messages(schema)[1] == (f'{BASE}.properties[c].default.foo: Invalid value: "integer": '
                                   f'foo in body must be of type string: "integer"')
    assert default_errs(schema, require_pruned_defaults=False) == [
        (f"{BASE}.properties[c].default.foo", "FieldValueTypeInvalid"),
        (f"{BASE}.properties[d].default.bad", "FieldValueInvalid")]


def test_defaults_in_embedded_metadata():
    embedded = {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {
        "apiVersion": {**STRING, "enum": ["foo/v1"]}, "kind": {**STRING, "enum": ["Foo"]},
        "metadata": {**OBJ, "properties": {"name": {**STRING, "default": "a/b"},
                                         "labels": {**OBJ, "additionalProperties": STRING, "default": {"a": 1}}}}}}
    assert [m.split(": Invalid value")[0] for m in messages({**OBJ, "properties": {"e": embedded}})] == [
        f"{BASE}.properties[e].properties[metadata].properties[name].default",
        f"{BASE}.properties[e].properties[metadata].properties[labels].default"]
    assert messages({**OBJ, "properties": {"e": embedded}})[1].endswith(
        'must result in valid metadata: metadata: Invalid value: {"labels":{"a":1}}: json: cannot unmarshal number '
        "into Go struct field ObjectMeta.labels of type string")
    spanning = {**OBJ, "properties": {"embedded": {**embedded, "properties": {
        **embedded["properties"], "metadata": OBJ}}}, "default": {"embedded": {
            "apiVersion": "bar/v1", "kind": "Foo", "metadata": {"name": "a"}}}}
    assert messages({**OBJ, "properties": {"s": spanning}}) == [
        f'{BASE}.properties[s].default.embedded.apiVersion: Unsupported value: "bar/v1": supported values: "foo/v1"']
    missing = {**OBJ, "properties": {"s": {**spanning, "default": {"embedded": {"metadata": {"name": "a"}}}}}}
    assert messages(missing) == [f"{BASE}.properties[s].default.embedded.apiVersion: Required value",
                                 f"{BASE}.properties[s].default.embedded.kind: Required value"]


def test_defaults_must_pass_rules():
    schema = {**OBJ, "properties": {
        "value": {**STRING, "default": "kube-everything", "x-kubernetes-validations": [{"rule": "self.startsWith('kube')"}]},
        "object": {**OBJ, "properties": {"field1": {"type": "integer"}, "field2": {"type": "integer"}},
                   "default": {"field1": 1, "field2": 2}, "x-kubernetes-validations": [{"rule": "self.field1 < self.field2"}]},
        "ratcheting": {**STRING, "default": "default", "x-kubernetes-validations": [
            {"rule": "oldSelf.hasValue()", "optionalOldSelf": True, "message": "foobarErrorMessage"}]}}}
    assert messages(schema) == [
        f'{BASE}.properties[ratcheting].default: Invalid value: "string": foobarErrorMessage']
    assert [m for m in messages(schema) if "running out of cost budget" in m] == []
    errs = validate_defaults(ROOT, new_structural(schema), True, budget=0)
    assert [str(e) for e in errs] == [
        f'{BASE}.properties[value].default: Invalid value: "string": validation failed due to running out of cost '
        "budget, no further validation rules will be run"]


def test_prune_defaults():
    s = new_structural({**OBJ, "properties": {
        "a": {**OBJ, "properties": {"foo": STRING}, "default": {"foo": "abc", "bar": 42}},
        "metadata": {**OBJ, "properties": {"name": {**STRING, "default": "n"}}},
        "e": {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {"spec": OBJ}, "default": {
            "apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "bogus": 1}, "spec": {"x": 1}, "y": 2}}}})
    assert prune_defaults(s) is True
    assert s.properties["a"].default == {"foo": "abc"}
    assert s.properties["metadata"].properties["name"].default == "n"
    assert s.properties["e"].default == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x"}, "spec": {}}
    assert prune_defaults(s) is False


def rule_errs(schema: dict, **kwargs: object) -> list[str]:
    return [str(e) for e in compile_rules(new_structural(schema), ROOT, **kwargs)]


def test_compile_rules_reports_compile_errors():
    errs = rule_errs({**OBJ, "properties": {"a": {**STRING, "x-kubernetes-validations": [
        {"rule": "self.x >"}, {"rule": "foo == 1"}, {"rule": "self == 'a'", "messageExpression": "'a' +"}]}}})
    assert errs[0].startswith(
        f"{BASE}.properties[a].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule"
        '{Rule:"self.x >", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:9: Syntax error: ')
    assert errs[1] == (
        f"{BASE}.properties[a].x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule"
        '{Rule:"foo == 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:1: undeclared "
        "reference to 'foo' (in container '')\n | foo == 1\n | ^")
    assert errs[2].startswith(f"{BASE}.properties[a].x-kubernetes-validations[2].messageExpression: Invalid value: "
                              "apiextensions.ValidationRule{")
    assert "}: messageExpression compilation failed: ERROR: <input>:1:6: Syntax error:" in errs[2]


def test_compile_rules_old_self_checks():
    assert rule_errs({**OBJ, "x-kubernetes-validations": [{"rule": "self == self", "optionalOldSelf": True}],
                      "properties": {
                          "l": {"type": "array", "maxItems": 10, "items": {**STRING, "maxLength": 10,
                                                                         "x-kubernetes-validations": [
                                                                             {"rule": "self == oldSelf"}]}},
                          "m": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                                "maxItems": 10, "items": {**OBJ, "properties": {"k": {**STRING, "maxLength": 5}},
                                                          "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}) == [
        f"{BASE}.x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not "
        "used in rule",
        f'{BASE}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf '
        f"cannot be used on the uncorrelatable portion of the schema within {BASE}.properties[l]"]


def test_compile_rules_cost_limits():
    unbounded = {**OBJ, "properties": {"l": {"type": "array", "items": {
        **STRING, "x-kubernetes-validations": [{"rule": "self.matches('^a+$')"}]}}}}
    errs = rule_errs(unbounded)
    assert errs[0] == (f"{BASE}.properties[l].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost "
                       "exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, "
                       "maxProperties, and maxLength where arrays, maps, and strings are declared)")
    assert errs[-1].startswith(f"{BASE}: Forbidden: x-kubernetes-validations estimated rule cost total for entire "
                               "OpenAPIv3 schema exceeds budget by factor of")
    assert rule_errs(unbounded, suppress_per_expression_cost=True)[0].endswith(
        "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema")
    bounded = {**OBJ, "properties": {"l": {"type": "array", "maxItems": 10, "items": {
        **STRING, "maxLength": 64, "x-kubernetes-validations": [{"rule": "self.matches('^a+$')"}]}}}}
    assert rule_errs(bounded) == []
