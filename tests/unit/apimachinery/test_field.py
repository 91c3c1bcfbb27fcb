"""Field error model: paths, reasons and Go's exact Error() texts."""

import pytest

from kube_apiserver.apimachinery.field import (
    OMIT_VALUE,
    ErrorType,
    FieldError,
    OrderedStruct,
    Path,
    aggregate_message,
    duplicate,
    forbidden,
    go_json,
    go_quote,
    internal,
    invalid,
    not_found,
    not_supported,
    required,
    to_aggregate,
    too_long,
    too_many,
    type_invalid,
)


def test_path_rendering() -> None:
    root = Path("root")
    assert str(root) == "root"
    p = root.child("first").child("second").index(0)
    assert str(p) == "root.first.second[0]"
    assert str(p.child("third").index(93)) == "root.first.second[0].third[93]"
    assert str(p.key("key")) == "root.first.second[0][key]"
    assert p.root() is root
    assert str(Path("metadata").child("labels").key("app")) == "metadata.labels[app]"
    assert str(Path("spec").child("containers").index(0).child("name")) == "spec.containers[0].name"


def test_path_multi_arg() -> None:
    p = Path("root", "first").child("second", "third")
    assert str(p) == "root.first.second.third"
    assert str(p.parent) == "root.first.second"
    assert str(p.parent.parent.parent) == "root"


@pytest.mark.parametrize(
    ("err", "reason"),
    [
        (invalid(Path("f"), "v", "d"), "FieldValueInvalid"),
        (not_supported(Path("f"), "v", []), "FieldValueNotSupported"),
        (duplicate(Path("f"), "v"), "FieldValueDuplicate"),
        (not_found(Path("f"), "v"), "FieldValueNotFound"),
        (required(Path("f"), "d"), "FieldValueRequired"),
        (internal(Path("f"), "e"), "InternalError"),
        (forbidden(Path("f"), "d"), "FieldValueForbidden"),
        (too_long(Path("f"), "v", 3), "FieldValueTooLong"),
        (too_many(Path("f"), 3, 2), "FieldValueTooMany"),
        (type_invalid(Path("f"), "v", "d"), "FieldValueTypeInvalid"),
    ],
)
def test_reasons(err: FieldError, reason: str) -> None:
    assert err.reason == reason


P = Path("path.to.field")


@pytest.mark.parametrize(
    ("err", "text"),
    [
        (FieldError(ErrorType.REQUIRED, "path.to.field", "the value", "the details"),
         "path.to.field: Required value: the details"),
        (required(P, "the details"), "path.to.field: Required value: the details"),
        (forbidden(P, "the details"), "path.to.field: Forbidden: the details"),
        (too_long(P, "the value", 1), "path.to.field: Too long: may not be more than 1 byte"),
        (too_long(P, "the value", 2), "path.to.field: Too long: may not be more than 2 bytes"),
        (too_long(P, "the value", -1), "path.to.field: Too long: value is too long"),
        (FieldError(ErrorType.TOO_MANY, "path.to.field", "the value", "the details"),
         'path.to.field: Too many: "the value": the details'),
        (too_many(P, 2, 1), "path.to.field: Too many: 2: must have at most 1 item"),
        (too_many(P, 3, 2), "path.to.field: Too many: 3: must have at most 2 items"),
        (too_many(P, 2, -1), "path.to.field: Too many: 2: has too many items"),
        (too_many(P, -1, 1), "path.to.field: Too many: must have at most 1 item"),
        (internal(P, "the error"), "path.to.field: Internal error: the error"),
        (invalid(P, "the value", "the details"), 'path.to.field: Invalid value: "the value": the details'),
        (invalid(P, -42, "the details"), "path.to.field: Invalid value: -42: the details"),
        (invalid(P, True, "the details"), "path.to.field: Invalid value: true: the details"),
        (invalid(P, ["one", "two", "three"], "the details"),
         'path.to.field: Invalid value: ["one","two","three"]: the details'),
        (invalid(P, {"one": 1, "two": 2, "three": 3}, "the details"),
         'path.to.field: Invalid value: {"one":1,"three":3,"two":2}: the details'),
        (invalid(P, OMIT_VALUE, "the details"), "path.to.field: Invalid value: the details"),
        (invalid(P, None, "the details"), "path.to.field: Invalid value: null: the details"),
        (FieldError(ErrorType.NOT_FOUND, "path.to.field", "the value", "the details"),
         'path.to.field: Not found: "the value": the details'),
        (not_supported(P, "the value", ["val1", "val2"]),
         'path.to.field: Unsupported value: "the value": supported values: "val1", "val2"'),
        (duplicate(P, "the value"), 'path.to.field: Duplicate value: "the value"'),
        (type_invalid(P, "the value", "the details"), 'path.to.field: Invalid value: "the value": the details'),
    ],
)
def test_error_formatting(err: FieldError, text: str) -> None:
    assert str(err) == text


def test_error_body_and_metadata_examples() -> None:
    err = invalid(Path("metadata", "name"), "Foo_bar", "a lowercase RFC 1123 subdomain must consist of ...")
    assert err.error_body() == 'Invalid value: "Foo_bar": a lowercase RFC 1123 subdomain must consist of ...'
    assert str(required(Path("metadata").child("name"), "name or generateName is required")) == \
        "metadata.name: Required value: name or generateName is required"
    assert str(required(Path("metadata").child("namespace"))) == "metadata.namespace: Required value"
    assert str(invalid(None, "x", "d")) == '<nil>: Invalid value: "x": d'


def test_go_quote() -> None:
    assert go_quote("plain") == '"plain"'
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("tab\there\n") == '"tab\\there\\n"'
    assert go_quote("\x01\x7f") == '"\\x01\\x7f"'
    assert go_quote("héllo") == '"héllo"'
    assert go_quote("\u00ad") == '"\\u00ad"'


def test_float_and_json_values() -> None:
    assert str(invalid(P, 1.5, "d")) == "path.to.field: Invalid value: 1.5: d"
    assert str(invalid(P, 1e6, "d")) == "path.to.field: Invalid value: 1e+06: d"
    assert str(invalid(P, 0.0001, "d")) == "path.to.field: Invalid value: 0.0001: d"
    assert str(invalid(P, 0.00001, "d")) == "path.to.field: Invalid value: 1e-05: d"
    assert go_json([1.0, 1e21, 1e-7, 123456789.0]) == "[1,1e+21,1e-7,123456789]"
    assert go_json({"b": "<&>", "a": None}) == '{"a":null,"b":"\\u003c\\u0026\\u003e"}'
    assert go_json(OrderedStruct((("z", 1), ("a", True)))) == '{"z":1,"a":true}'


def test_aggregate() -> None:
    a = invalid(Path("f"), "v", "d")
    b = internal(Path(""), "e")  # Go renders an empty root name as "[]"
    assert to_aggregate([]) == []
    assert len(to_aggregate([a, invalid(Path("f"), "v", "d")])) == 1
    assert len(to_aggregate([a, b])) == 2
    assert aggregate_message([a]) == 'f: Invalid value: "v": d'
    assert aggregate_message([a, a]) == 'f: Invalid value: "v": d'
    assert aggregate_message([a, b]) == '[f: Invalid value: "v": d, []: Internal error: e]'
    assert aggregate_message([]) == ""


def test_with_origin() -> None:
    err = invalid(Path("field"), "value", "detail").with_origin("origin1")
    assert err.origin == "origin1"
