"""x-kubernetes-validations evaluation (schema/cel/validation_test.go)."""

from __future__ import annotations

import pytest

from kube_apiserver.apiextensions.schema import (
    new_rule_validator,
    new_structural,
    valid_field_path,
)
from kube_apiserver.apimachinery.field import Path

OBJ = {"type": "object"}
STRING, INTEGER, NUMBER = {"type": "string"}, {"type": "integer"}, {"type": "number"}


def rules(*rules: str | dict) -> list[dict]:
    return [r if isinstance(r, dict) else {"rule": r} for r in rules]


ROOT_PATH = Path("root")


def errs(schema: dict, obj: object, old: object = None, root: bool = False, path: Path | None = ROOT_PATH,
         ratcheting: bool = True, **kwargs: object) -> list[str]:
    validator = new_rule_validator(new_structural(schema), root, **kwargs)
    assert validator is not None
    return [str(e) for e in validator.validate(obj, old, path, ratcheting=ratcheting)]


def test_no_rules_no_validator():
    assert new_rule_validator(new_structural({**OBJ, "properties": {"a": STRING}})) is None


def test_transition_rules():
    schema = {**OBJ, "properties": {"field": {**STRING, "x-kubernetes-validations": rules("self == oldSelf")}}}
    assert errs(schema, {"field": "y"}, {"field": "x"}, path=None) == [
        'field: Invalid value: "string": failed rule: self == oldSelf']
    assert errs(schema, {"field": "x"}, {"field": "x"}) == []
    assert errs(schema, {"field": "y"}) == []  # no old value: transition rules are skipped


def test_transition_rules_under_map_lists_correlate_by_key():
    schema = {**OBJ, "properties": {"field": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k1", "k2"],
        "items": {**OBJ, "properties": {"k1": STRING, "k2": STRING, "v1": {
            **NUMBER, "x-kubernetes-validations": rules("self >= oldSelf")}}}}}}
    old = {"field": [{"k1": "a", "k2": "b", "v1": 1.0}]}
    assert errs(schema, {"field": [{"k1": "x", "k2": "y", "v1": 0.5}, {"k1": "a", "k2": "b", "v1": 0.9}]}, old,
                path=None) == ['field[1].v1: Invalid value: "number": failed rule: self >= oldSelf']
    assert errs(schema, {"field": [{"k1": "a", "k2": "b", "v1": 1.2}]}, old) == []


def test_rules_under_atomic_lists_and_numbers():
    schema = {**OBJ, "properties": {"field": {"type": "array", "items": {**OBJ, "properties": {
        "x": {**STRING, "x-kubernetes-validations": rules("self == 'x'")},
        "n": {**NUMBER, "x-kubernetes-validations": rules("self > 0.5")}}}}}}
    assert errs(schema, {"field": [{"x": "y", "n": 1}]}, path=None) == [
        "field[0].x: Invalid value: \"string\": failed rule: self == 'x'"]


def test_reason_and_field_path():
    forbidden = {"rule": "self.m == 2", "reason": "FieldValueForbidden"}
    schema = {**OBJ, "properties": {"f": {**OBJ, "properties": {"m": INTEGER}, "x-kubernetes-validations": [forbidden]}}}
    assert errs(schema, {"f": {"m": 1}}) == ["root.f: Forbidden: failed rule: self.m == 2"]
    schema["properties"]["f"]["x-kubernetes-validations"] = [{**forbidden, "fieldPath": ".m"}]
    assert errs(schema, {"f": {"m": 1}}) == ["root.f.m: Forbidden: failed rule: self.m == 2"]
    schema["properties"]["f"]["x-kubernetes-validations"] = [{"rule": "self.m == 2"}]
    assert errs(schema, {"f": {"m": 1}}) == ['root.f: Invalid value: "object": failed rule: self.m == 2']
    multi = {**OBJ, "properties": {"field1": STRING, "field2": STRING, "field3": STRING}, "x-kubernetes-validations": [
        {"rule": 'self.field2 != "value2"', "reason": "FieldValueDuplicate", "fieldPath": ".field2"},
        {"rule": 'self.field3 != "value3"', "reason": "FieldValueRequired", "fieldPath": ".field3"},
        {"rule": 'self.field1 != "value1"', "reason": "FieldValueForbidden", "fieldPath": ".field1"}]}
    assert errs(multi, {"field1": "value1", "field2": "value2", "field3": "value3"}) == [
        'root.field2: Duplicate value: "object"',
        'root.field3: Required value: failed rule: self.field3 != "value3"',
        'root.field1: Forbidden: failed rule: self.field1 != "value1"']


def _message_schema(message_expression: str, message: str = "") -> dict:
    rule = {"rule": "false", "messageExpression": message_expression}
    if message:
        rule["message"] = message
    return {**OBJ, "properties": {"str": STRING}, "x-kubernetes-validations": [rule]}


@pytest.mark.parametrize("expression, message, expected", [
    ('"static string"', "", 'root: Invalid value: "object": static string'),
    ('"this is messageExpression"', "invisible", 'root: Invalid value: "object": this is messageExpression'),
    ("true", "", 'root: Invalid value: "object": failed rule: false'),
    ('"str1 " + self.str', "", 'root: Invalid value: "object": str1 a string'),
    ('"str1 " + ["a", "b", "c", "d"][4]', "message not messageExpression",
     'root: Invalid value: "object": message not messageExpression'),
    ('"str1 " + ["a", "b", "c", "d"][4]', "", 'root: Invalid value: "object": failed rule: false'),
    ('"str with \\na newline"', "message not messageExpression",
     'root: Invalid value: "object": message not messageExpression'),
    ('"' + "a" * 5121 + '"', "message not messageExpression",
     'root: Invalid value: "object": message not messageExpression'),
    ('string("     ")', "message not messageExpression", 'root: Invalid value: "object": message not messageExpression'),
])
def test_message_expression(expression, message, expected):
    assert errs(_message_schema(expression, message), {"str": "a string"}) == [expected]


def test_message_expression_limits():
    schema = new_structural(_message_schema('"string 1" + "string 2" + "string 3"'))
    validator = new_rule_validator(schema, False)
    errors, remaining = validator.validate_with_budget({"str": "a"}, None, Path("root"), 1)
    assert [str(e) for e in errors] == ['root: Invalid value: "object": messageExpression evaluation failed due to '
                                        "running out of cost budget, no further validation rules will be run"]
    assert remaining == -1


def test_cost_budget_and_per_call_limit():
    schema = {**OBJ, "properties": {"val1": INTEGER}, "x-kubernetes-validations": rules("self.val1 > 0")}
    validator = new_rule_validator(new_structural(schema), False)
    errors, remaining = validator.validate_with_budget({"val1": 2**63 - 1}, None, Path("root"), 0)
    assert [str(e) for e in errors] == ['root: Invalid value: "object": validation failed due to running out of '
                                        "cost budget, no further validation rules will be run"]
    assert remaining == -1
    assert errs(schema, {"val1": 1}, per_call_limit=0) == [
        "root: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation "
        "rules will be run due to call cost exceeds limit for rule: self.val1 > 0"]


def test_runtime_cost_grows_with_the_data():
    schema = {**OBJ, "properties": {"l": {"type": "array", "items": STRING,
                                        "x-kubernetes-validations": rules("self.all(x, x.startsWith('a'))")}}}
    validator = new_rule_validator(new_structural(schema), False)
    _, small = validator.validate_with_budget({"l": ["a"] * 10}, None, None, 10_000_000)
    _, large = validator.validate_with_budget({"l": ["a" * 100] * 1000}, None, None, 10_000_000)
    assert 10_000_000 - large > 100 * (10_000_000 - small)
    assert errs(schema, {"l": ["a" * 1000] * 4000}, per_call_limit=100_000)[0].endswith(
        "call cost exceeds limit for rule: self.all(x, x.startsWith('a'))")


def test_runtime_errors():
    # a map's keys and an int-or-string's type are only known at run time
    schema = {**OBJ, "properties": {"a": INTEGER, "m": {**OBJ, "additionalProperties": STRING},
                                    "ios": {"x-kubernetes-int-or-string": True}},
              "x-kubernetes-validations": rules("self.m.nope == 'x'", "self.ios + 1 == 2", "self.a > 0")}
    assert errs(schema, {"a": 1, "m": {}, "ios": "x"}) == [
        "root: Invalid value: \"object\": no such key: nope evaluating rule: self.m.nope == 'x'",
        "root: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, "
        "function or macro signature for rule: self.ios + 1 == 2"]


def test_compile_errors_are_reported_at_run_time():
    schema = {**OBJ, "x-kubernetes-validations": rules("self.x >", "")}
    assert errs(schema, {})[0].startswith('root: Invalid value: "object": rule compile error: compilation failed: '
                                          "ERROR: <input>:1:9: Syntax error:")


def test_resource_root_sees_type_and_object_meta():
    schema = {**OBJ, "properties": {"spec": OBJ}, "x-kubernetes-validations": rules(
        "self.metadata.name.startsWith('x')", "self.kind == 'K' && self.apiVersion == 'g/v1'",
        "!has(self.metadata.generateName)")}
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "abc", "labels": {"a": "b"}}, "spec": {}}
    assert errs(schema, obj, root=True, path=None) == [
        "<nil>: Invalid value: \"object\": failed rule: self.metadata.name.startsWith('x')"]


def test_int_or_string_embedded_and_escaped_names():
    schema = {**OBJ, "properties": {
        "port": {"x-kubernetes-int-or-string": True, "x-kubernetes-validations": rules(
            "type(self) == int ? self > 0 : self.endsWith('%')")},
        "e": {**OBJ, "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True,
              "x-kubernetes-validations": rules("self.kind == 'Pod'")},
        "x": {**OBJ, "properties": {"namespace": STRING, "a-b": STRING},
              "x-kubernetes-validations": rules("self.__namespace__ == self.a__dash__b")}}}
    ok = {"port": "50%", "e": {"apiVersion": "v1", "kind": "Pod"}, "x": {"namespace": "n", "a-b": "n"}}
    assert errs(schema, ok) == []
    assert errs(schema, {"port": -1, "e": {"kind": "Job"}, "x": {"namespace": "n", "a-b": "m"}}) == [
        "root.port: Invalid value: \"\": failed rule: type(self) == int ? self > 0 : self.endsWith('%')",
        "root.e: Invalid value: \"object\": failed rule: self.kind == 'Pod'",
        'root.x: Invalid value: "object": failed rule: self.__namespace__ == self.a__dash__b']


def test_all_of_rules():
    schema = {**OBJ, "properties": {"a": INTEGER}, "allOf": [{"x-kubernetes-validations": rules("self.a > 1")}]}
    assert new_rule_validator(new_structural(schema)) is None  # upstream looks for rules outside allOf only
    schema["x-kubernetes-validations"] = rules("self.a < 10")
    assert errs(schema, {"a": 1}) == ['root: Invalid value: "object": failed rule: self.a > 1']


@pytest.mark.parametrize("obj, old, failed", [
    ({"foo": "bar"}, None, False),
    ({"foo": "invalid"}, {"foo": "bar"}, True),
    ({"foo": "invalid again"}, {"foo": "invalid"}, False),
    ({"foo": "invalid"}, {"foo": "valid"}, True),
])
def test_optional_old_self(obj, old, failed):
    schema = {**OBJ, "properties": {"foo": STRING}, "x-kubernetes-validations": [{
        "rule": "self.foo == 'valid' || !oldSelf.hasValue() || oldSelf.value().foo != 'valid' && "
                "self.foo != 'invalid'", "optionalOldSelf": True}]}
    assert bool(errs(schema, obj, old, ratcheting=False)) == failed


@pytest.mark.parametrize("obj, old, failed", [(10, None, False), (9, None, True), (10, 5, False), (9, 5, False),
                                              (5, 5, False), (4, 5, True)])
def test_optional_old_self_ratchets_minimum(obj, old, failed):
    schema = {**INTEGER, "x-kubernetes-validations": [{
        "rule": "self >= 10 || (oldSelf.hasValue() && oldSelf.value() <= self)", "optionalOldSelf": True}]}
    assert bool(errs(schema, obj, old)) == failed


def test_ratcheting_turns_unchanged_errors_into_warnings():
    schema = {**OBJ, "properties": {"a": {**STRING, "x-kubernetes-validations": rules("self.size() < 3")},
                                  "b": {**STRING, "x-kubernetes-validations": rules("self.size() < 3")}}}
    validator = new_rule_validator(new_structural(schema), False)
    warnings: list[str] = []
    assert [str(e) for e in validator.validate({"a": "long", "b": "long"}, {"a": "long", "b": "x"}, None,
                                               warnings=warnings)] == [
        'b: Invalid value: "string": failed rule: self.size() < 3']
    assert warnings == ['a: Invalid value: "string": failed rule: self.size() < 3']
    assert len(validator.validate({"a": "long", "b": "long"}, {"a": "long", "b": "x"}, ratcheting=False)) == 2


FIELD_PATH_SCHEMA = new_structural({**OBJ, "properties": {
    "foo": {**OBJ, "additionalProperties": {**OBJ, "properties": {"subAdd": NUMBER}}},
    "white space": NUMBER, "'foo'bar": NUMBER,
    "a": {**OBJ, "properties": {"foo's": NUMBER, "test\a": NUMBER, "bb[b": NUMBER,
                              "bbb": {**OBJ, "properties": {"c": NUMBER, "34": NUMBER}},
                              "bbb.c": {**OBJ, "properties": {"a-b.3'4": NUMBER}}}},
    "list": {"type": "array", "items": {**OBJ, "properties": {"a": NUMBER, "a-b.3'4": NUMBER}}}}})


@pytest.mark.parametrize("json_path, expected", [
    (".a", "a"), ("['\\'foo\\'bar']", "'foo'bar"), (".\\'foo\\'bar", "error: does not refer to a valid field"),
    (". a", "error: does not refer to a valid field"), (".white space", "white space"),
    ("['white space']", "white space"), (".a.bb[b", "error: does not refer to a valid field"),
    (".a['bbb.c']", "a.bbb.c"), (".a['bbb.c'", "error: unexpected end of JSON path"),
    (".", "error: unexpected end of JSON path"), (".foo.subAdd", "foo[subAdd]"), (".foo['subAdd']", "foo[subAdd]"),
    (".a.foo's", "a.foo's"), (".a['foo\\'s']", "a.foo's"), (".a['test\\a']", "a.test\a"),
    (".a.foo", "error: does not refer to a valid field"),
    (".a.bbb[0]", "error: expected single quoted string but got 0"), (".a.bbb.34", "a.bbb.34"),
    (".a.bbb['34']", "a.bbb.34"), (".list", "list"), (".list[0]", "error: expected single quoted string but got 0"),
    (".list. a", "error: does not refer to a valid field"), (".list['a']", "error: does not refer to a valid field"),
    ("a", "error: expected [ or . but got: a"), (".c", "error: does not refer to a valid field"),
    (".a..b", "error: does not refer to a valid field"), (".list.a-b.34", "error: does not refer to a valid field"),
])
def test_valid_field_path(json_path, expected):
    path, _, err = valid_field_path(json_path, FIELD_PATH_SCHEMA)
    assert (f"error: {err}" if err else str(path)) == expected
