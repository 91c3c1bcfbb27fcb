"""OpenAPI v2 (/openapi/v2): one Swagger 2.0 document for every group version, as JSON or as gnostic's
protobuf, which kubectl fetches for client-side validation (always for `kind: List`).

The document is the OpenAPI v3 documents of the installed group versions (endpoints/openapi.py)
written back in v2 form, as kube-apiserver publishes it: bodies are `in: body` parameters, parameters
carry their type inline, responses their schema, and schemas reference `#/definitions/` with a
referring schema keeping only its description, default and extensions beside the `$ref` (kubectl's
parser rejects a `$ref` with a type or properties). It is rendered on first request and kept until
the set of group versions changes; JSON and protobuf share the JSON's ETag (Vary: Accept)."""

from __future__ import annotations

import email.utils
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from .http import Request, Response
from .openapi import OpenAPIService, group_version_document
from .openapi_v2_proto import encode_document

Doc = dict[str, Any]

DEFINITIONS = "#/definitions/"
SCHEMA_KEYS = frozenset({
    "$ref", "additionalProperties", "allOf", "default", "description", "enum", "example", "exclusiveMaximum",
    "exclusiveMinimum", "externalDocs", "format", "items", "maxItems", "maxLength", "maxProperties",
    "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "pattern", "properties",
    "readOnly", "required", "title", "type", "uniqueItems", "xml"})
TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array"})
PARAMETER_KEYS = ("type", "format", "items", "collectionFormat", "default", "maximum", "exclusiveMaximum",
                  "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
                  "uniqueItems", "enum", "multipleOf")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
SECURITY_DEFINITIONS = {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                        "name": "authorization", "in": "header"}}
JSON = "application/json"
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
OFFERS = (("application", "json", JSON),
          ("application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF),
          ("application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", PROTOBUF))


# ---- schemas ----

def _referenced_name(schema: Doc) -> str | None:
    """The definition a schema refers to: `$ref`, or v3's `allOf: [{$ref}]` with siblings."""
    ref = schema.get("$ref")
    all_of = schema.get("allOf")
    if not isinstance(ref, str) and isinstance(all_of, list) and len(all_of) == 1:
        ref = all_of[0].get("$ref") if isinstance(all_of[0], dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _reference(schema: Doc, name: str, known: frozenset[str]) -> Doc:
    out: Doc = {"$ref": DEFINITIONS + name} if name in known else {}  # a dangling $ref fails kubectl's parse
    out.update((k, v) for k, v in schema.items() if k in ("description", "default") or k.startswith("x-"))
    return out


def _type(value: Any) -> str | None:
    if isinstance(value, str):
        return value if value in TYPES else None
    types = [t for t in value if t != "null"] if isinstance(value, list) else []
    return types[0] if len(types) == 1 and types[0] in TYPES else None


def schema_v2(schema: Any, known: frozenset[str]) -> Doc:
    """A v3 schema in v2 form: `#/definitions/` references, and only what Swagger 2.0 knows."""
    if not isinstance(schema, dict):
        return {}
    name = _referenced_name(schema)
    if name is not None:
        return _reference(schema, name, known)
    out: Doc = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {prop: schema_v2(sub, known) for prop, sub in value.items()}
        elif key == "items" and isinstance(value, list):
            out[key] = [schema_v2(s, known) for s in value]
        elif key == "items":
            out[key] = schema_v2(value, known)
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else schema_v2(value, known)
        elif key == "allOf" and isinstance(value, list):
            out[key] = [schema_v2(s, known) for s in value]
        elif key == "type":
            if (kind := _type(value)) is not None:
                out[key] = kind
        elif key in SCHEMA_KEYS or key.startswith("x-"):
            out[key] = value
    if "oneOf" in schema and out.get("format") == "int-or-string":
        out["type"] = "string"  # v3's oneOf integer/string is v2's string (kube-openapi)
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {}  # kubectl's parser wants exactly one item schema
    return out


# ---- paths ----

def _parameter_v2(param: Doc) -> Doc:
    """Query, path and header parameters carry their schema's type inline."""
    schema = param.get("schema") if isinstance(param.get("schema"), dict) else {}
    out: Doc = {k: schema[k] for k in PARAMETER_KEYS if k in schema}
    out.update((k, v) for k, v in param.items() if k not in ("schema", "content", "style", "explode"))
    return out


def _response_v2(response: Doc, known: frozenset[str]) -> Doc:
    out: Doc = {"description": response.get("description", "")}
    content = response.get("content") or {}
    schema = next((c.get("schema") for c in content.values() if isinstance(c, dict) and "schema" in c), None)
    if schema is not None:
        out["schema"] = schema_v2(schema, known)
    return out


def _body_parameter(body: Doc, known: frozenset[str]) -> Doc:
    """v3's requestBody as v2's `in: body` parameter (one schema for every content type)."""
    content = body.get("content") or {}
    schema = next((c.get("schema") for c in content.values() if isinstance(c, dict)), None) or {}
    return {"name": "body", "in": "body", "required": bool(body.get("required")),
            "schema": schema_v2(schema, known)}


def _operation_v2(op: Doc, known: frozenset[str]) -> Doc:
    out: Doc = {}
    params = [_parameter_v2(p) for p in op.get("parameters", [])]
    if isinstance(body := op.get("requestBody"), dict):
        out["consumes"] = list(body.get("content") or {})
        params.insert(0, _body_parameter(body, known))
    responses = op.get("responses") or {}
    out["produces"] = sorted({t for r in responses.values() for t in (r.get("content") or {})}) or [JSON]
    out["schemes"] = ["https"]
    for key, value in op.items():
        if key == "responses":
            out[key] = {code: _response_v2(r, known) for code, r in value.items()}
        elif key in ("parameters", "requestBody"):
            if params:
                out["parameters"] = params
        elif key not in ("callbacks", "servers"):
            out[key] = value
    return out


def _path_item_v2(item: Doc, known: frozenset[str]) -> Doc:
    out: Doc = {}
    for key, value in item.items():
        if key in METHODS:
            out[key] = _operation_v2(value, known)
        elif key == "parameters" and value:
            out[key] = [_parameter_v2(p) for p in value]
        elif key.startswith("x-"):
            out[key] = value
    return out


def swagger_document(service: OpenAPIService) -> Doc:
    """The Swagger 2.0 document of every installed group version."""
    group_versions = sorted(service.group_versions.items())
    documents = [group_version_document(*gv, service.schemas_of(key)) for key, gv in group_versions]
    schemas: Doc = {}
    for doc in documents:
        schemas.update(doc["components"]["schemas"])
    known = frozenset(schemas)
    for key, _ in group_versions:  # custom resources' kinds have their own v2 form (the CRD builder's)
        schemas.update((name, schema) for name, schema in service.schemas_of(key).v2_definitions().items()
                       if name in schemas)
    paths = {path: _path_item_v2(item, known) for doc in documents for path, item in doc["paths"].items()}
    info = documents[0]["info"] if documents else {"title": "Kubernetes", "version": "v1.34.0"}
    return {"swagger": "2.0", "info": info, "paths": dict(sorted(paths.items())),
            "definitions": {name: schema_v2(schemas[name], known) for name in sorted(schemas)},
            "securityDefinitions": SECURITY_DEFINITIONS, "security": [{"BearerToken": []}]}


# ---- serving ----

def negotiate(accept: str) -> str | None:
    """The representation for an Accept header (kube-openapi's handler: goautoneg's clause order)."""
    clauses = []
    for index, clause in enumerate((accept or "*/*").split(",")):
        media, *params = (p.strip() for p in clause.split(";"))
        kind, _, sub = media.lower().partition("/")
        q = next((p.partition("=")[2] for p in params if p.lower().startswith("q=")), "1")
        try:
            weight = float(q)
        except ValueError:
            weight = 0.0
        if media and weight > 0:
            clauses.append((-weight, kind == "*", (sub or "*") == "*", index, kind, sub or "*"))
    for *_, kind, sub in sorted(clauses):
        for offer_kind, offer_sub, content_type in OFFERS:
            if kind in (offer_kind, "*") and sub in (offer_sub, "*"):
                return content_type
    return None


def _etag_matches(header: str, etag: str) -> bool:
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or etag in tags


@dataclass
class OpenAPIV2Service:
    """Renders the document of `source` once per change of its group versions."""

    source: OpenAPIService
    basis: list[tuple[str, Any]] | None = None
    document: Doc = field(default_factory=dict)
    rendered: dict[str, bytes] = field(default_factory=dict)  # content type -> body
    etag: str = ""
    last_modified: str = ""

    def _current_basis(self) -> list[tuple[str, Any]]:
        return [("", self.source.schemas), *sorted(self.source.group_versions.items())]

    def _fresh(self) -> bool:
        current = self._current_basis()
        return self.basis is not None and len(current) == len(self.basis) and all(
            k1 == k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(current, self.basis, strict=True))

    def body(self, content_type: str) -> bytes:
        if not self._fresh():
            self.basis = self._current_basis()
            self.document = swagger_document(self.source)
            json_body = orjson.dumps(self.document)
            self.rendered = {JSON: json_body}
            self.etag = hashlib.sha512(json_body).hexdigest().upper()
            self.last_modified = email.utils.formatdate(time.time(), usegmt=True)
        if content_type not in self.rendered:
            self.rendered[content_type] = encode_document(self.document)
        return self.rendered[content_type]

    async def serve(self, req: Request) -> Response:
        content_type = negotiate(req.headers.get("accept", ""))
        if content_type is None:
            return Response(406, b"", "", [("vary", "Accept")])
        body = self.body(content_type)
        headers = [("vary", "Accept"), ("etag", f'"{self.etag}"')]
        if self._not_modified(req):
            return Response(304, b"", "", headers)
        return Response(200, body, content_type, [*headers, ("last-modified", self.last_modified)])

    def _not_modified(self, req: Request) -> bool:
        """Go's http.ServeContent: If-None-Match, else If-Modified-Since."""
        if_none_match = req.headers.get("if-none-match")
        if if_none_match is not None:
            return _etag_matches(if_none_match, f'"{self.etag}"')
        since = req.headers.get("if-modified-since")
        if not since:
            return False
        parse = email.utils.parsedate_to_datetime
        try:
            return parse(since) >= parse(self.last_modified)
        except (TypeError, ValueError):
            return False
