"""OpenAPI v2: the Swagger 2.0 document built from the routes, its gnostic protobuf encoding (decoded
back here by an independent reader of OpenAPIv2.proto), and serving (negotiation, ETag, caching)."""

from __future__ import annotations

import asyncio
import struct
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
import yaml

from kube_apiserver.api import schemas
from kube_apiserver.apimachinery.openapischema import SchemaSource
from kube_apiserver.apimachinery.protobuf import double_field, encode_varint, varint_field
from kube_apiserver.endpoints.http import Request
from kube_apiserver.endpoints.installer import ResourceRoutes
from kube_apiserver.endpoints.openapi import OpenAPIService
from kube_apiserver.endpoints.openapi_v2 import (
    JSON,
    PROTOBUF,
    OpenAPIV2Service,
    negotiate,
    schema_v2,
    swagger_document,
)
from kube_apiserver.endpoints.openapi_v2_proto import encode, encode_document

SCHEMAS = SchemaSource(schemas.definitions, schemas.schema_name)
PROTO_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
GVK = {"group": "", "kind": "ConfigMap", "version": "v1"}

# ---- an independent reader of the messages (field numbers from gnostic's OpenAPIv2.proto) ----
# number -> (json key, kind). Kinds: s, b, i, d scalars; any (Any.yaml); [k] repeated; a message name.
# Key "*": named entries {1: name, 2: value} merged into the object; "x": vendor extensions;
# "=": a oneof member merged into the object.
PARAM = {1: ("required", "b"), 2: ("in", "s"), 3: ("description", "s"), 4: ("name", "s")}
READER: dict[str, dict[int, tuple[str, str]]] = {
    "Document": {1: ("swagger", "s"), 2: ("info", "Info"), 8: ("paths", "Paths"),
                 9: ("definitions", "Definitions"), 12: ("security", "[SecurityRequirement]"),
                 13: ("securityDefinitions", "SecurityDefinitions"), 16: ("x", "x")},
    "Info": {1: ("title", "s"), 2: ("version", "s"), 7: ("x", "x")},
    "Paths": {1: ("x", "x"), 2: ("*", "PathItem")},
    "PathItem": {2: ("get", "Operation"), 3: ("put", "Operation"), 4: ("post", "Operation"),
                 5: ("delete", "Operation"), 8: ("patch", "Operation"), 9: ("parameters", "[ParametersItem]"),
                 10: ("x", "x")},
    "Operation": {1: ("tags", "[s]"), 3: ("description", "s"), 5: ("operationId", "s"),
                  6: ("produces", "[s]"), 7: ("consumes", "[s]"), 8: ("parameters", "[ParametersItem]"),
                  9: ("responses", "Responses"), 10: ("schemes", "[s]"), 13: ("x", "x")},
    "ParametersItem": {1: ("=", "Parameter")},
    "Parameter": {1: ("=", "BodyParameter"), 2: ("=", "NonBodyParameter")},
    "BodyParameter": {1: ("description", "s"), 2: ("name", "s"), 3: ("in", "s"), 4: ("required", "b"),
                      5: ("schema", "Schema")},
    "NonBodyParameter": {3: ("=", "Query"), 4: ("=", "PathParameter")},
    "Query": {**PARAM, 6: ("type", "s"), 20: ("uniqueItems", "b")},
    "PathParameter": {**PARAM, 5: ("type", "s"), 19: ("uniqueItems", "b")},
    "Responses": {1: ("*", "ResponseValue")},
    "ResponseValue": {1: ("=", "Response")},
    "Response": {1: ("description", "s"), 2: ("schema", "SchemaItem")},
    "SchemaItem": {1: ("=", "Schema")},
    "Definitions": {1: ("*", "Schema")},
    "Properties": {1: ("*", "Schema")},
    "Schema": {1: ("$ref", "s"), 2: ("format", "s"), 4: ("description", "s"), 5: ("default", "any"),
               7: ("maximum", "d"), 9: ("minimum", "d"), 11: ("maxLength", "i"), 16: ("uniqueItems", "b"),
               19: ("required", "[s]"), 20: ("enum", "[any]"), 21: ("additionalProperties", "Additional"),
               22: ("type", "TypeItem"), 23: ("items", "ItemsItem"), 25: ("properties", "Properties"),
               31: ("x", "x")},
    "SecurityDefinitions": {1: ("*", "SecurityDefinitionsItem")},
    "SecurityDefinitionsItem": {2: ("=", "ApiKeySecurity")},
    "ApiKeySecurity": {1: ("type", "s"), 2: ("name", "s"), 3: ("in", "s"), 4: ("description", "s")},
    "SecurityRequirement": {1: ("*", "StringArray")},
}


def fields(data: bytes) -> list[tuple[int, Any]]:
    out, pos = [], 0
    while pos < len(data):
        key, pos = varint(data, pos)
        if key & 7 == 0:
            value, pos = varint(data, pos)
        elif key & 7 == 1:
            value, pos = struct.unpack("<d", data[pos:pos + 8])[0], pos + 8
        else:
            assert key & 7 == 2, key
            length, pos = varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        out.append((key >> 3, value))
    return out


def varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        result, pos, shift = result | (byte & 0x7F) << shift, pos + 1, shift + 7
        if not byte & 0x80:
            return result, pos


def named(data: bytes) -> tuple[str, bytes]:
    parts = dict(fields(data))
    return parts.get(1, b"").decode(), parts.get(2, b"")


def read(message: str, data: bytes) -> Any:
    if message in ("TypeItem", "StringArray"):
        values = [v.decode() for _, v in fields(data)]
        return values[0] if message == "TypeItem" and len(values) == 1 else values
    if message == "ItemsItem":
        return read("Schema", fields(data)[0][1])
    if message == "Additional":
        number, value = fields(data)[0]
        return bool(value) if number == 2 else read("Schema", value)
    out: dict[str, Any] = {}
    for number, value in fields(data):
        key, kind = READER[message][number]
        if key == "x":
            name, any_message = named(value)
            out[name] = yaml.safe_load(dict(fields(any_message))[2].decode())  # as kube-openapi reads them
        elif key == "*":
            name, inner = named(value)
            out[name] = read(kind, inner)
        elif key == "=":
            out.update(read(kind, value))
        elif kind.startswith("["):
            out.setdefault(key, []).append(scalar(kind[1:-1], value))
        else:
            out[key] = scalar(kind, value)
    return out


def scalar(kind: str, value: Any) -> Any:
    if kind == "s":
        return value.decode()
    if kind == "b":
        return bool(value)
    if kind in ("i", "d"):
        return value
    if kind == "any":
        return yaml.safe_load(dict(fields(value))[2].decode())
    return read(kind, value)


# ---- a route table like the installer's ----

def route(kind: str, verbs: tuple[str, ...], namespaced: bool = True, sub: str = "") -> ResourceRoutes:
    info = SimpleNamespace(group="", version="v1", kind=kind, namespaced=namespaced, subresource=sub)
    return ResourceRoutes(SimpleNamespace(info=info, custom_resource=False), dict.fromkeys(verbs, None))  # type: ignore[arg-type]


ALL = ("get", "list", "create", "update", "patch", "delete", "deletecollection")


def core_service() -> OpenAPIService:
    service = OpenAPIService(SCHEMAS)
    status = route("Namespace", ("get", "update", "patch"), False, "status")
    service.add("", "v1", {"configmaps": route("ConfigMap", ALL), "namespaces": route("Namespace", ALL, False),
                           "namespaces/status": status})
    return service


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return swagger_document(core_service())


# ---- the document ----

def test_document_is_swagger_2(document: dict[str, Any]) -> None:
    assert document["swagger"] == "2.0"
    assert document["info"] == {"title": "Kubernetes", "version": "v1.34.0"}
    assert document["securityDefinitions"]["BearerToken"]["type"] == "apiKey"
    assert b"#/components/" not in orjson.dumps(document)
    assert "/api/v1/namespaces/{name}/status" in document["paths"]


def test_create_takes_a_body_parameter(document: dict[str, Any]) -> None:
    post = document["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"]
    body = post["parameters"][0]
    assert body == {"name": "body", "in": "body", "required": True,
                    "schema": {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap"}}
    assert post["consumes"] == ["*/*"]
    assert post["x-kubernetes-action"] == "post"
    assert post["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    dry_run = next(p for p in post["parameters"] if p["name"] == "dryRun")
    assert dry_run["in"] == "query" and dry_run["type"] == "string" and "schema" not in dry_run
    assert post["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap"}


def test_patch_consumes_the_patch_types(document: dict[str, Any]) -> None:
    patch = document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert "application/apply-patch+yaml" in patch["consumes"]
    assert patch["parameters"][0]["in"] == "body"


def test_path_parameters_carry_their_type(document: dict[str, Any]) -> None:
    params = document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["parameters"]
    assert {"name": "name", "in": "path", "required": True, "type": "string"}.items() <= params[0].items()


def test_definitions_reference_in_v2_form(document: dict[str, Any]) -> None:
    config_map = document["definitions"]["io.k8s.api.core.v1.ConfigMap"]
    assert config_map["x-kubernetes-group-version-kind"] == [GVK]
    metadata = config_map["properties"]["metadata"]
    assert metadata["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert set(metadata) == {"$ref", "description"}
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry" in document["definitions"]


def test_dangling_references_and_v3_only_keywords_are_dropped() -> None:
    converted = schema_v2({"type": ["string", "null"], "nullable": True, "oneOf": [{"type": "string"}],
                           "properties": {"a": {"allOf": [{"$ref": "#/components/schemas/Missing"}],
                                                "description": "d", "type": "object"}},
                           "items": {"$ref": "#/components/schemas/Known"}}, frozenset({"Known"}))
    assert converted == {"type": "string", "properties": {"a": {"description": "d"}},
                         "items": {"$ref": "#/definitions/Known"}}
    assert schema_v2({"type": "array"}, frozenset()) == {"type": "array", "items": {}}


def kubectl_parse(schema: dict[str, Any], definitions: dict[str, Any], path: str) -> None:
    """kube-openapi's NewOpenAPIData (pkg/util/proto/document.go): what makes kubectl's parse fail."""
    if "$ref" in schema:
        assert not schema.get("properties") and "type" not in schema, path
        assert schema["$ref"].removeprefix("#/definitions/") in definitions, path
        return
    kind = schema.get("type")
    assert kind is None or isinstance(kind, str), path
    if kind == "array":
        assert isinstance(schema.get("items"), dict), path
        kubectl_parse(schema["items"], definitions, path + "[]")
    elif kind in (None, "object"):
        for name, sub in (schema.get("properties") or {}).items():
            kubectl_parse(sub, definitions, f"{path}.{name}")
        if isinstance(schema.get("additionalProperties"), dict):
            kubectl_parse(schema["additionalProperties"], definitions, path + "{}")
    else:
        assert kind in ("string", "number", "integer", "boolean"), path


def test_every_builtin_definition_parses_as_kubectl_does() -> None:
    raw = schemas.definitions()
    known = frozenset(raw)
    definitions = {name: schema_v2(schema, known) for name, schema in raw.items()}
    for name, schema in definitions.items():
        kubectl_parse(schema, definitions, name)


# ---- protobuf ----

def test_wire_helpers() -> None:
    assert encode_varint(1) == b"\x01" and encode_varint(300) == b"\xac\x02"
    assert encode_varint(-1) == b"\xff" * 9 + b"\x01"
    assert varint_field(21, 0) == b"\xa8\x01\x00"
    assert double_field(7, 1.5) == b"\x39" + struct.pack("<d", 1.5)


def test_known_encodings() -> None:
    assert encode_document({"swagger": "2.0", "info": {"title": "K"}}) == b"\x0a\x032.0\x12\x03\x0a\x01K"
    # additionalProperties: false is a oneof member, written even though false (field 21, then 2:0)
    assert encode("Schema", {"additionalProperties": False}) == b"\xaa\x01\x02\x10\x00"
    assert encode("Schema", {"type": "string", "uniqueItems": False}) == b"\xb2\x01\x08\x0a\x06string"
    extension = encode("Schema", {"x-kubernetes-map-type": "atomic"})
    assert extension == b"\xfa\x01\x24\x0a\x15x-kubernetes-map-type\x12\x0b\x12\x09\"atomic\"\n"


def test_document_round_trips(document: dict[str, Any]) -> None:
    decoded = read("Document", encode_document(document))
    assert decoded == orjson.loads(orjson.dumps(document))


def test_all_builtin_definitions_round_trip() -> None:
    raw = schemas.definitions()
    known = frozenset(raw)
    definitions = {name: schema_v2(raw[name], known) for name in sorted(raw)}
    decoded = read("Document", encode_document({"definitions": definitions}))
    assert decoded["definitions"] == definitions
    gvk = decoded["definitions"]["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"]
    assert gvk == [{"group": "", "kind": "Pod", "version": "v1"}]


# ---- serving ----

@pytest.mark.parametrize(("accept", "expected"), [
    ("", JSON), ("*/*", JSON), ("application/json", JSON), (PROTO_ACCEPT, PROTOBUF),
    ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", PROTOBUF),
    (f"{PROTO_ACCEPT}, application/json", PROTOBUF), (f"application/json;q=0.5, {PROTO_ACCEPT}", PROTOBUF),
    ("*/*, application/json;q=0.9", JSON), ("application/*", JSON),
    ("text/html", None), ("application/yaml", None), ("application/json;q=0", None),
])
def test_negotiation(accept: str, expected: str | None) -> None:
    assert negotiate(accept) == expected


def get(service: OpenAPIV2Service, **headers: str) -> Any:
    return asyncio.run(service.serve(Request("GET", "/openapi/v2", b"", headers)))


def test_serving_with_etag_and_not_modified() -> None:
    service = OpenAPIV2Service(core_service())
    resp = get(service, accept=PROTO_ACCEPT)
    headers = dict(resp.headers)
    assert resp.status == 200 and headers["content-type"] == PROTOBUF and headers["vary"] == "Accept"
    json_resp = get(service)
    assert dict(json_resp.headers)["etag"] == headers["etag"]  # one ETag, Vary: Accept
    assert orjson.loads(json_resp.body)["swagger"] == "2.0"
    assert get(service, **{"if-none-match": headers["etag"]}).status == 304
    assert get(service, **{"if-none-match": '"other"'}).status == 200
    assert get(service, **{"if-modified-since": headers["last-modified"]}).status == 304
    unacceptable = get(service, accept="text/html")
    assert unacceptable.status == 406 and ("vary", "Accept") in unacceptable.headers


def test_rendered_once_until_group_versions_change() -> None:
    source = core_service()
    service = OpenAPIV2Service(source)
    first = service.body(JSON)
    assert service.body(JSON) is first
    source.add("apps", "v1", {})
    assert service.body(JSON) is not first
    again = service.body(JSON)
    source.remove("apps", "v1")
    assert service.body(JSON) is not again
