"""A create or update body is walked with its kind's schema once: the decoding that types it (nulls as
zero values, []byte canonical) also finds the wrong-type error, which comes before any strict field error,
the unknown fields and whether the body repeated a key, instead of a checking walk first and the decoding
walk after the strict checks (and an unknown-field walk and a string count besides)."""

from __future__ import annotations

import asyncio
import json

import pytest

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery import errors, fieldvalidation, schematypes, typedwalk
from kube_apiserver.apimachinery.openapischema import SchemaSource
from kube_apiserver.endpoints.handlers.decode import decode_object
from kube_apiserver.endpoints.handlers.scope import RequestScope
from kube_apiserver.endpoints.http import Request
from kube_apiserver.registry.rest import ResourceInfo

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)


def _scope() -> RequestScope:
    info = ResourceInfo(
        group="", version="v1", resource="configmaps", kind="ConfigMap", namespaced=True, singular="configmap"
    )
    return RequestScope(info, storage=None, schema=SOURCE.for_kind("", "v1", "ConfigMap"))


def _decode(body: dict | bytes, query: bytes = b"") -> tuple[dict, list[str]]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = Request(
        "POST", "/api/v1/namespaces/ns/configmaps", query, {"content-type": "application/json"}, body=raw
    )
    obj = asyncio.run(decode_object(req, _scope()))
    return obj, req.values.get("warnings", [])


@pytest.fixture
def decodings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The walks of the object with its schema: typed checking or decoding, the unknown-field walk, the
    count of its strings, and the one walk (typedwalk) that does all three."""
    walks: list[str] = []
    for module, name in [
        (schematypes, "check"),
        (schematypes, "decode"),
        (typedwalk, "walk"),
        (fieldvalidation, "unknown_fields"),
        (fieldvalidation, "may_have_duplicates"),
    ]:
        original = getattr(module, name)
        monkeypatch.setattr(
            module,
            name,
            lambda *a, _name=name, _original=original, **k: walks.append(_name) or _original(*a, **k),
        )
    return walks


def test_a_body_is_typed_with_its_schema_in_one_walk(decodings: list[str]) -> None:
    obj, warnings = _decode(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "binaryData": {"b": "YWI="},
            "metadata": {"name": "c", "creationTimestamp": None, "labels": {"a": "b"}},
            "data": {"k": "v"},
            "bogus": 1,
        }
    )
    assert decodings == ["walk"]
    assert obj["binaryData"] == {"b": "YWI="}
    assert "creationTimestamp" not in obj["metadata"] and "bogus" not in obj
    assert warnings == ['unknown field "bogus"']


def test_a_wrong_type_comes_before_strict_errors_and_a_repeated_key_is_still_found(
    decodings: list[str],
) -> None:
    with pytest.raises(errors.StatusError) as wrong:
        _decode(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": 1}, "x": 1},
            b"fieldValidation=Strict",
        )
    assert wrong.value.code == 400 and "cannot unmarshal number into Go struct field ConfigMap.data" in str(
        wrong.value
    )
    body = (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":null},'
        b'"data":{"k":"v","k":"w"}}'
    )
    obj, warnings = _decode(body)
    assert obj["data"] == {"k": "w"} and warnings == ['duplicate field "data.k"']
