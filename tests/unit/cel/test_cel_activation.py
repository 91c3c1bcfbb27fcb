"""to_cel(): JSON values under an OpenAPI schema, as Kubernetes' UnstructuredToVal presents them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kube_apiserver import cel
from kube_apiserver.cel.activation import parse_duration

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "ratio": {"type": "number"},
                "count": {"type": "integer"},
                "namespace": {"type": "string"},
                "x-prop": {"type": "string"},
                "a__b": {"type": "string"},
                "timeout": {"type": "string", "format": "duration"},
                "at": {"type": "string", "format": "date-time"},
                "day": {"type": "string", "format": "date"},
                "data": {"type": "string", "format": "byte"},
                "port": {"x-kubernetes-int-or-string": True},
                "optional": {"type": "string", "nullable": True},
                "labels": {"type": "object", "additionalProperties": {"type": "number"}},
                "items": {"type": "array", "items": {"type": "number"}},
                "opaque": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "properties": {"spec": {"type": "object", "properties": {}}}},
            },
        },
    },
}

OBJECT = {
    "apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w", "namespace": "default", "labels": {"a": "b"}},
    "spec": {
        "ratio": 1, "count": 2.0, "namespace": "ns", "x-prop": "dash", "a__b": "under",
        "timeout": "1m30s", "at": "2024-01-02T03:04:05Z", "day": "2024-01-02", "data": "aGk=",
        "port": "http", "optional": None, "labels": {"x": 1}, "items": [1, 2.5], "opaque": {"hidden": 1},
        "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"}, "spec": {}},
        "undeclared": True,
    },
}


def converted() -> dict:
    return cel.to_cel(OBJECT, SCHEMA, root=True)


def test_numbers_follow_the_schema() -> None:
    spec = converted()["spec"]
    assert type(spec["ratio"]) is float and type(spec["count"]) is int
    assert spec["labels"] == {"x": 1.0} and type(spec["labels"]["x"]) is float
    assert [type(item) for item in spec["items"]] == [float, float]


def test_formatted_strings() -> None:
    spec = converted()["spec"]
    assert spec["timeout"] == timedelta(seconds=90)
    assert spec["at"] == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert spec["day"] == datetime(2024, 1, 2, tzinfo=UTC)
    assert spec["data"] == b"hi"
    assert spec["port"] == "http"


def test_property_names_are_escaped() -> None:
    spec = converted()["spec"]
    assert spec["__namespace__"] == "ns" and spec["x__dash__prop"] == "dash" and spec["a__underscores__b"] == "under"


def test_undeclared_null_and_unknown_fields_are_invisible() -> None:
    spec = converted()["spec"]
    assert "undeclared" not in spec and "optional" not in spec
    assert spec["opaque"] == {}


def test_resource_root_and_embedded_resources_expose_type_and_object_meta() -> None:
    root = converted()
    assert root["metadata"] == {"name": "w"} and root["kind"] == "Widget"
    assert root["spec"]["embedded"]["metadata"] == {"name": "p"} and root["spec"]["embedded"]["kind"] == "Pod"


def test_rules_over_converted_values() -> None:
    program = cel.compile(
        "self.spec.ratio + 0.5 == 1.5 && self.spec.timeout > duration('1m') && self.spec.__namespace__ == 'ns' "
        "&& !has(self.spec.optional) && self.spec.at.getFullYear() == 2024 && self.metadata.name == 'w'",
        variables=["self"])
    assert program.evaluate({"self": converted()}) is True


def test_without_schema_values_pass_through() -> None:
    assert cel.to_cel({"a": 1, "b": [1.5]}) == {"a": 1, "b": [1.5]}


@pytest.mark.parametrize(("name", "escaped"), [
    ("namespace", "__namespace__"), ("x-prop", "x__dash__prop"), ("a.b", "a__dot__b"), ("a/b", "a__slash__b"),
    ("a__b", "a__underscores__b"), ("plain_name", "plain_name"), ("1abc", None), ("a b", None), ("", None),
])
def test_escape(name: str, escaped: str | None) -> None:
    assert cel.escape(name) == escaped


@pytest.mark.parametrize(("text", "seconds"), [
    ("1h", 3600), ("1m30s", 90), ("-1.5s", -1.5), ("0", 0), ("1d", 86400), ("2w", 1209600), ("100ms", 0.1),
])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


def test_parse_duration_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        parse_duration("soon")
