"""The OpenAPI v2 document as protobuf: gnostic's `openapi_v2.Document` (github.com/google/gnostic-models,
openapiv2/OpenAPIv2.proto), which kubectl decodes from /openapi/v2 for client-side validation.

The JSON document is encoded as gnostic's compiler would read it (kube-openapi's ToProtoBinary):
maps keep their key order as repeated Named* entries, `x-` keys become vendor extensions, and
`default`, `enum`, `example` and extension values are `Any` messages holding their YAML text (JSON is
YAML, which is how kube-openapi's VendorExtensionToMap reads them back). Fields are written in field
number order; proto3 zero scalars are left out; message fields present in the JSON are always written.

Messages are written one per line, `jsonKey=number:type`. A type is a message name, `bool`, `int`
(int64), `double`, `Any`, or nothing for a string; `[T]` is a repeated T and `[]` a repeated string.
`x-=n` is the repeated NamedAny of vendor extensions; `*=n:T` puts every other key in a repeated
Named message {name=1, value=2:T}."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..apimachinery.protowire import bytes_field, double_field, varint_field

Spec = dict[str, tuple[int, str]]

NUMERIC_LIMITS = ("maximum={0}:double exclusiveMaximum={1}:bool minimum={2}:double exclusiveMinimum={3}:bool "
                  "maxLength={4}:int minLength={5}:int pattern={6} maxItems={7}:int minItems={8}:int "
                  "uniqueItems={9}:bool enum={10}:[Any] multipleOf={11}:double")


def _limits(first: int) -> str:
    return NUMERIC_LIMITS.format(*range(first, first + 12))


NOTATION = f"""
Document: swagger=1 info=2:Info host=3 basePath=4 schemes=5:[] consumes=6:[] produces=7:[] paths=8:Paths definitions=9:Definitions parameters=10:ParameterDefinitions responses=11:ResponseDefinitions security=12:[SecurityRequirement] securityDefinitions=13:SecurityDefinitions tags=14:[Tag] externalDocs=15:ExternalDocs x-=16
Info: title=1 version=2 description=3 termsOfService=4 contact=5:Contact license=6:License x-=7
Contact: name=1 url=2 email=3 x-=4
License: name=1 url=2 x-=3
ExternalDocs: description=1 url=2 x-=3
Tag: name=1 description=2 externalDocs=3:ExternalDocs x-=4
Paths: x-=1 *=2:PathItem
PathItem: $ref=1 get=2:Operation put=3:Operation post=4:Operation delete=5:Operation options=6:Operation head=7:Operation patch=8:Operation parameters=9:[ParametersItem] x-=10
Operation: tags=1:[] summary=2 description=3 externalDocs=4:ExternalDocs operationId=5 produces=6:[] consumes=7:[] parameters=8:[ParametersItem] responses=9:Responses schemes=10:[] deprecated=11:bool security=12:[SecurityRequirement] x-=13
BodyParameter: description=1 name=2 in=3 required=4:bool schema=5:Schema x-=6
JsonReference: $ref=1 description=2
QueryParameterSubSchema, FormDataParameterSubSchema: required=1:bool in=2 description=3 name=4 allowEmptyValue=5:bool type=6 format=7 items=8:PrimitivesItems collectionFormat=9 default=10:Any {_limits(11)} x-=23
PathParameterSubSchema, HeaderParameterSubSchema: required=1:bool in=2 description=3 name=4 type=5 format=6 items=7:PrimitivesItems collectionFormat=8 default=9:Any {_limits(10)} x-=22
PrimitivesItems: type=1 format=2 items=3:PrimitivesItems collectionFormat=4 default=5:Any {_limits(6)} x-=18
Header: type=1 format=2 items=3:PrimitivesItems collectionFormat=4 default=5:Any {_limits(6)} description=18 x-=19
Responses: *=1:ResponseValue x-=2
Response: description=1 schema=2:SchemaItem headers=3:Headers examples=4:Examples x-=5
Headers: *=1:Header
Examples: *=1:Any
Schema: $ref=1 format=2 title=3 description=4 default=5:Any multipleOf=6:double maximum=7:double exclusiveMaximum=8:bool minimum=9:double exclusiveMinimum=10:bool maxLength=11:int minLength=12:int pattern=13 maxItems=14:int minItems=15:int uniqueItems=16:bool maxProperties=17:int minProperties=18:int required=19:[] enum=20:[Any] additionalProperties=21:AdditionalPropertiesItem type=22:TypeItem items=23:ItemsItem allOf=24:[Schema] properties=25:Properties discriminator=26 readOnly=27:bool xml=28:Xml externalDocs=29:ExternalDocs example=30:Any x-=31
FileSchema: format=1 title=2 description=3 default=4:Any required=5:[] type=6 readOnly=7:bool externalDocs=8:ExternalDocs example=9:Any x-=10
Xml: name=1 namespace=2 prefix=3 attribute=4:bool wrapped=5:bool x-=6
Properties, Definitions: *=1:Schema
ParameterDefinitions: *=1:Parameter
ResponseDefinitions: *=1:Response
SecurityDefinitions: *=1:SecurityDefinitionsItem
SecurityRequirement: *=1:StringArray
Oauth2Scopes: *=1
ApiKeySecurity: type=1 name=2 in=3 description=4 x-=5
BasicAuthenticationSecurity: type=1 description=2 x-=3
Oauth2ImplicitSecurity: type=1 flow=2 scopes=3:Oauth2Scopes authorizationUrl=4 description=5 x-=6
Oauth2PasswordSecurity, Oauth2ApplicationSecurity: type=1 flow=2 scopes=3:Oauth2Scopes tokenUrl=4 description=5 x-=6
Oauth2AccessCodeSecurity: type=1 flow=2 scopes=3:Oauth2Scopes authorizationUrl=4 tokenUrl=5 description=6 x-=7
"""


def _parse(notation: str) -> dict[str, Spec]:
    messages: dict[str, Spec] = {}
    for line in notation.strip().splitlines():
        names, _, body = line.partition(": ")
        spec: Spec = {}
        for item in body.split():
            key, _, rest = item.partition("=")
            number, _, kind = rest.partition(":")
            spec[key] = (int(number), kind or "string")
        for name in names.split(", "):
            messages[name] = spec
    return messages


MESSAGES = _parse(NOTATION)


# ---- oneofs and repeated wrappers: the content of the wrapping message ----

def _parameters_item(value: dict[str, Any]) -> bytes:
    if "$ref" in value:
        return bytes_field(2, encode("JsonReference", value))
    return bytes_field(1, encode("Parameter", value))


def _parameter(value: dict[str, Any]) -> bytes:
    if value.get("in") == "body":
        return bytes_field(1, encode("BodyParameter", value))
    return bytes_field(2, encode("NonBodyParameter", value))


NON_BODY = {"header": (1, "HeaderParameterSubSchema"), "formData": (2, "FormDataParameterSubSchema"),
            "query": (3, "QueryParameterSubSchema"), "path": (4, "PathParameterSubSchema")}
SECURITY = {"basic": (1, "BasicAuthenticationSecurity"), "apiKey": (2, "ApiKeySecurity"),
            "implicit": (3, "Oauth2ImplicitSecurity"), "password": (4, "Oauth2PasswordSecurity"),
            "application": (5, "Oauth2ApplicationSecurity"), "accessCode": (6, "Oauth2AccessCodeSecurity")}


def _non_body(value: dict[str, Any]) -> bytes:
    number, message = NON_BODY.get(value.get("in", ""), NON_BODY["query"])
    return bytes_field(number, encode(message, value))


def _response_value(value: dict[str, Any]) -> bytes:
    if "$ref" in value:
        return bytes_field(2, encode("JsonReference", value))
    return bytes_field(1, encode("Response", value))


def _schema_item(value: dict[str, Any]) -> bytes:
    if value.get("type") == "file":
        return bytes_field(2, encode("FileSchema", value))
    return bytes_field(1, encode("Schema", value))


def _additional_properties(value: dict[str, Any] | bool) -> bytes:
    if isinstance(value, bool):
        return varint_field(2, int(value))  # a oneof member is written even when false
    return bytes_field(1, encode("Schema", value))


def _security_item(value: dict[str, Any]) -> bytes:
    kind = value.get("flow") if value.get("type") == "oauth2" else value.get("type")
    number, message = SECURITY.get(kind or "", SECURITY["apiKey"])
    return bytes_field(number, encode(message, value))


def _type_item(value: str | list[str]) -> bytes:
    return b"".join(bytes_field(1, t.encode()) for t in ([value] if isinstance(value, str) else value))


def _items_item(value: dict[str, Any] | list[dict[str, Any]]) -> bytes:
    schemas = [value] if isinstance(value, dict) else value
    return b"".join(bytes_field(1, encode("Schema", s)) for s in schemas)


def _string_array(value: list[str]) -> bytes:
    return b"".join(bytes_field(1, s.encode()) for s in value)


WRAPPERS: dict[str, Callable[[Any], bytes]] = {
    "ParametersItem": _parameters_item, "Parameter": _parameter, "NonBodyParameter": _non_body,
    "ResponseValue": _response_value, "SchemaItem": _schema_item,
    "AdditionalPropertiesItem": _additional_properties, "SecurityDefinitionsItem": _security_item,
    "TypeItem": _type_item, "ItemsItem": _items_item, "StringArray": _string_array,
}


# ---- fields ----

NOT_YAML_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def yaml_text(value: Any) -> str:
    """The YAML text of a value as `Any.yaml` holds it: JSON's flow style, which YAML parsers read
    (characters YAML does not print raw, or reads as line breaks, escaped)."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _any(value: Any) -> bytes:
    return bytes_field(2, yaml_text(value).encode())


def _scalar(number: int, kind: str, value: Any) -> bytes:
    """A singular field; proto3 leaves zero scalars out."""
    if kind == "string":
        return bytes_field(number, str(value).encode()) if value != "" else b""
    if kind == "bool":
        return varint_field(number, 1) if value else b""
    if kind == "int":
        return varint_field(number, int(value)) if value else b""
    if kind == "double":
        return double_field(number, float(value)) if value else b""
    if kind == "Any":
        return bytes_field(number, _any(value))
    return bytes_field(number, encode(kind, value))


def _field(number: int, kind: str, value: Any) -> bytes:
    if kind.startswith("["):
        item = kind[1:-1] or "string"
        return b"".join(_repeated_item(number, item, v) for v in value)
    return _scalar(number, kind, value)


def _repeated_item(number: int, kind: str, value: Any) -> bytes:
    """An element of a repeated field: written even when zero."""
    if kind == "string":
        return bytes_field(number, str(value).encode())
    return _scalar(number, kind, value)


def _named(number: int, kind: str, name: str, value: Any) -> bytes:
    """A Named* entry {name=1, value=2} of a map-like message."""
    return bytes_field(number, _scalar(1, "string", name) + _scalar(2, kind, value))


def encode(message: str, value: Any) -> bytes:
    """The encoded content of `message` read from its JSON form (no tag or length)."""
    wrapper = WRAPPERS.get(message)
    if wrapper is not None:
        return wrapper(value)
    spec = MESSAGES[message]
    parts: list[tuple[int, bytes]] = []
    for key, item in value.items():
        if key.startswith("x-") and "x-" in spec:
            parts.append((spec["x-"][0], _named(spec["x-"][0], "Any", key, item)))
        elif key in spec:
            number, kind = spec[key]
            parts.append((number, _field(number, kind, item)))
        elif "*" in spec:
            number, kind = spec["*"]
            parts.append((number, _named(number, kind, key, item)))
    parts.sort(key=lambda part: part[0])  # stable: repeated entries keep their order
    return b"".join(data for _, data in parts)


def encode_document(document: dict[str, Any]) -> bytes:
    """The serialized `openapi_v2.Document` of a Swagger 2.0 document."""
    return encode("Document", document)
