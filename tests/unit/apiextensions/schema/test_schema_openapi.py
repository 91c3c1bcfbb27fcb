"""OpenAPI value validation of custom resources (pkg/apiserver/validation/validation_test.go
TestValidateCustomResource, plus kube-openapi's validators and formats)."""

from __future__ import annotations

import pytest

from kube_apiserver.apiextensions.schema import SchemaValidator
from kube_apiserver.apimachinery.field import Path


def field_schema(**field: object) -> dict:
    return {"type": "object", "properties": {"field": dict(field)}}


def errs(schema: dict, obj: object, version: tuple[int, int] | None = (1, 33)) -> list[str]:
    return [str(e) for e in SchemaValidator(schema, version).validate(obj)]


KINDS = [("foo", "string"), (42, "integer"), (True, "boolean"), (1.2, "number"), ([], "array"), ({}, "object")]


@pytest.mark.parametrize("nullable", [False, True])
@pytest.mark.parametrize("value, kind", KINDS)
def test_object_type(nullable, value, kind):
    expected = [] if kind == "object" else [
        f'field: Invalid value: "{kind}": field in body must be of type object: "{kind}"']
    assert errs(field_schema(type="object", nullable=nullable), {"field": value}) == expected


def test_null():
    assert errs(field_schema(type="object"), {"field": None}) == [
        'field: Invalid value: "null": field in body must be of type object: "null"']
    assert errs(field_schema(type="object", nullable=True), {"field": None}) == []
    assert errs(field_schema(nullable=True), {"field": None}) == []


@pytest.mark.parametrize("value, kind", KINDS)
def test_int_or_string(value, kind):
    expected = [] if kind in ("string", "integer") else [
        f'field: Invalid value: "{kind}": field in body must be of type integer,string: "{kind}"']
    assert errs(field_schema(**{"x-kubernetes-int-or-string": True}), {"field": value}) == expected


def test_int_or_string_with_any_of_and_all_of():
    any_of = field_schema(**{"nullable": True, "x-kubernetes-int-or-string": True,
                             "anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert errs(any_of, {"field": None}) == [] and errs(any_of, {"field": 42}) == []
    assert errs(any_of, {"field": True}) == [
        'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        'field: Invalid value: "boolean": field in body must be of type integer: "boolean"']
    all_of = field_schema(**{"nullable": True, "x-kubernetes-int-or-string": True,
                             "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]})
    assert sorted(errs(all_of, {"field": []})) == [
        '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated',
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        'field: Invalid value: "array": field in body must be of type integer,string: "array"',
        'field: Invalid value: "array": field in body must be of type integer: "array"']


def test_invalid_pattern_is_reported_per_value():
    assert errs(field_schema(type="string", pattern="+"), {"field": "foo"}) == [
        "field: Invalid value: \"foo\": field in body should match '+, but pattern is invalid: error parsing "
        "regexp: missing argument to repetition operator: `+`'"]


def test_required_and_enum():
    schema = {"type": "object", "required": ["field"], "properties": {"field": {
        "type": "object", "required": ["nestedint", "nestedstring"], "properties": {
            "nestedint": {"type": "integer", "enum": [1, 2]}, "nestedstring": {"type": "string", "enum": ["a", "b"]}}}}}
    assert errs(schema, {"test": "a"}) == ["field: Required value"]
    assert errs(schema, {"field": {}}) == ["field.nestedint: Required value", "field.nestedstring: Required value"]
    assert errs(schema, {"field": {"nestedint": "x", "nestedstring": True}}) == [
        'field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"',
        'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
        'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"',
        'field.nestedstring: Unsupported value: true: supported values: "a", "b"']


def test_enum_go_conversions():
    schema = field_schema(enum=[1, "A", {"a": [1]}])
    assert errs(schema, {"field": 1.0}) == [] and errs(schema, {"field": 1.7}) == []  # int64(1.7) == 1
    assert errs(schema, {"field": 65}) == []  # string(rune(65)) == "A"
    assert errs(schema, {"field": {"a": [1]}}) == []
    assert errs(schema, {"field": {"a": [1.0]}}) == [
        'field: Unsupported value: {"a":[1]}: supported values: "1", "A", "{\\"a\\":[1]}"']
    assert errs(field_schema(enum=["a"], nullable=True), {"field": None}) == [
        'field: Unsupported value: "null": supported values: "a"']


def test_limits():
    assert errs(field_schema(type="object", maxProperties=2), {"field": {"a": 1, "b": 1, "c": 1}}) == [
        "field: Too many: 3: must have at most 2 items"]
    assert errs(field_schema(type="object", minProperties=2), {"field": {"a": 1}}) == [
        "field: Invalid value: 1: field in body should have at least 2 properties"]
    assert errs(field_schema(type="array", maxItems=2), {"field": ["a", "b", "c"]}) == [
        "field: Too many: 3: must have at most 2 items"]
    assert errs(field_schema(type="array", minItems=1), {"field": []}) == [
        "field: Invalid value: 0: field in body should have at least 1 items"]
    assert errs(field_schema(type="array", uniqueItems=True), {"field": [1, 1.0, 1]}) == [
        'field: Invalid value: "": field in body shouldn\'t contain duplicates']
    assert errs(field_schema(type="string", maxLength=2), {"field": "abc"}) == [
        "field: Too long: may not be more than 2 bytes"]
    assert errs(field_schema(type="string", maxLength=2), {"field": "äö"}) == []  # runes, not bytes
    assert errs(field_schema(type="string", minLength=3, pattern="^b"), {"field": "ab"}) == [
        'field: Invalid value: "ab": field in body should be at least 3 chars long']
    assert errs(field_schema(type="string", pattern="^b"), {"field": "ab"}) == [
        "field: Invalid value: \"ab\": field in body should match '^b'"]


def test_numbers():
    schema = field_schema(type="number", minimum=1.5, maximum=1e6, exclusiveMaximum=True)
    assert errs(schema, {"field": 1}) == []  # integers compare with int64(minimum): 1 >= 1
    assert errs(schema, {"field": 1.2}) == [
        "field: Invalid value: 1.2: field in body should be greater than or equal to 1.5"]
    assert errs(schema, {"field": 1e6}) == ["field: Invalid value: 1e+06: field in body should be less than 1e+06"]
    assert errs(field_schema(type="number", multipleOf=0.1), {"field": 0.3}) == []
    assert errs(field_schema(type="number", multipleOf=0.1), {"field": 0.35}) == [
        "field: Invalid value: 0.35: field in body should be a multiple of 0.1"]
    assert errs(field_schema(type="integer", multipleOf=3), {"field": 10}) == [
        "field: Invalid value: 10: field in body should be a multiple of 3"]
    assert errs(field_schema(type="integer", multipleOf=0.5), {"field": 10}) == [
        "field: Invalid value: 0: factor MultipleOf declared for field must be positive: 0"]
    assert errs(field_schema(type="integer"), {"field": 2.0}) == []
    assert errs(field_schema(type="integer"), {"field": 2.5}) == [
        'field: Invalid value: "number": field in body must be of type integer: "number"']
    assert errs(field_schema(type="integer", format="int32"), {"field": 2.5}) == [
        'field: Invalid value: "float64": field in body must be of type int32: "float64"']
    assert errs(field_schema(type="integer", format="int32"), {"field": True}) == [
        'field: Invalid value: "": field in body must be of type int32: ""']


def test_additional_properties():
    schema = {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}},
                                                "closed": {"type": "object", "additionalProperties": False}}}
    assert errs(schema, {"m": {"a": 1, "b": "x"}, "closed": {"k": 1}}) == [
        'm.b: Invalid value: "string": m.b in body must be of type integer: "string"',
        'closed: Invalid value: "k": closed.k in body is a forbidden property']


def test_one_of_and_not():
    schema = field_schema(type="object", oneOf=[{"required": ["a"]}, {"required": ["b"]}], **{"not": {"required": ["c"]}})
    assert errs(schema, {"field": {"a": 1}}) == []
    assert errs(schema, {"field": {"a": 1, "b": 1}}) == [
        '<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives']
    assert errs(schema, {"field": {}}) == [
        '<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found none valid',
        "field.a: Required value"]
    assert errs(schema, {"field": {"a": 1, "c": 1}}) == [
        '<nil>: Invalid value: "": "field" must not validate the schema (not)']


def test_any_of_reports_the_branch_matching_best():
    schema = field_schema(type="object", anyOf=[
        {"properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "string", "maxLength": 1}, "c": {"type": "integer"}}, "required": ["b"]}])
    assert errs(schema, {"field": {"b": "xy", "c": 1}}) == [
        '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
        "field.b: Too long: may not be more than 1 byte"]


@pytest.mark.parametrize("fmt, good, bad", [
    ("date", "2024-02-29", "2023-02-29"), ("date-time", "2024-01-02T03:04:05.1Z", "2024-01-02 03:04:05"),
    ("duration", "1h30m", "soon"), ("duration", "3 days", "1x"), ("uri", "https://x.example/p?q", "relative/path"),
    ("email", "Jo <jo@example.com>", "jo@"), ("hostname", "a-b.example.com", "-a.com"),
    ("ipv4", "010.1.2.3", "1.2.3"), ("ipv6", "::ffff:1.2.3.4", "1.2.3.4"), ("cidr", "10.0.0.1/8", "10.0.0.0/33"),
    ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b-3c:4d:5e"), ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
    ("byte", "aGVsbG8=", "hello!"), ("isbn10", "0321751043", "0321751044"), ("ssn", "123-45-6789", "123456789"),
    ("hexcolor", "#fff", "#ffff"), ("rgbcolor", "rgb(1, 2, 255)", "rgb(256,0,0)"),
    ("creditcard", "4111 1111 1111 1111", "4111111111111112"), ("bsonobjectid", "507f1f77bcf86cd799439011", "x"),
])
def test_string_formats(fmt, good, bad):
    schema = field_schema(type="string", format=fmt)
    assert errs(schema, {"field": good}) == []
    assert errs(schema, {"field": bad}) == [f'field: Invalid value: "{bad}": field in body must be of type {fmt}: "{bad}"']


def test_formats_follow_the_compatibility_version():
    schema = field_schema(type="string", format="k8s-long-name")
    assert errs(schema, {"field": "a.-"}) == []  # kube-apiserver 1.34 validates at 1.33
    assert errs(schema, {"field": "a.-"}, (1, 34)) == [
        'field: Invalid value: "a.-": field in body must be of type k8s-long-name: "a.-"']
    assert errs(field_schema(type="string", format="int32"), {"field": "x"}) == []  # stripped for strings
    assert errs(field_schema(type="string", format="date-time"), {"field": 5}) == [
        'field: Invalid value: "int64": field in body must be of type date-time: "int64"']


def test_path_prefix_and_duplicates():
    validator = SchemaValidator({"type": "object", "properties": {"s": field_schema(type="string")},
                                 "allOf": [{"properties": {"s": {"properties": {"field": {"maxLength": 1}}}}},
                                           {"properties": {"s": {"properties": {"field": {"maxLength": 1}}}}}]})
    assert [str(e) for e in validator.validate({"s": {"field": "ab"}}, Path("status"))] == [
        "status.s.field: Too long: may not be more than 1 byte",
        'status: Invalid value: "": "" must validate all the schemas (allOf). None validated']


def test_validate_update_ratchets_unchanged_values():
    validator = SchemaValidator({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 1}, "b": {"type": "string", "maxLength": 1},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                 "port": {"type": "integer", "maximum": 10}}}}},
            "required": ["c"]}}})
    old = {"spec": {"a": "xx", "b": "y", "ports": [{"name": "p", "port": 20}]}}
    new = {"spec": {"a": "xx", "b": "yy", "ports": [{"name": "q", "port": 30}, {"name": "p", "port": 20}]}}
    assert [str(e) for e in validator.validate_update(new, old)] == [
        "spec.b: Too long: may not be more than 1 byte",
        "spec.ports[0].port: Invalid value: 30: spec.ports[0].port in body should be less than or equal to 10",
        "spec.c: Required value"]
    assert validator.validate_update(old, old) == []
    assert len(validator.validate(old)) == 3


def test_patterns_of_a_long_array_are_tested_without_match_objects(monkeypatch: pytest.MonkeyPatch):
    """A pattern is tested once per string (50,000 times in a big array): through RE2 itself, not the bindings'
    search, which builds a match object with character offsets per call (five times the cost)."""
    re2 = pytest.importorskip("re2")
    searches = 0
    plain = re2._Regexp.search

    def counted(self: object, *args: object) -> object:
        nonlocal searches
        searches += 1
        return plain(self, *args)

    monkeypatch.setattr(re2._Regexp, "search", counted)
    schema = {"type": "object", "properties": {"names": {"type": "array", "items": {
        "type": "string", "pattern": "^[a-z0-9-]+$"}}}}
    names = [f"n-{i}" for i in range(1000)] + ["Bad", "é"]
    assert errs(schema, {"names": names}) == [
        "names[1000]: Invalid value: \"Bad\": names[1000] in body should match '^[a-z0-9-]+$'",
        "names[1001]: Invalid value: \"é\": names[1001] in body should match '^[a-z0-9-]+$'"]
    assert searches < 10
