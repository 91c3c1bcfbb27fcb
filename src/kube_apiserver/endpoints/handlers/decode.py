"""Reading a request body into an object of the endpoint's kind (k8s create.go/update.go decoding)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...apimachinery import deepjson, errors, fieldvalidation, schematypes, serializer, typedwalk, yamllimits
from ...apimachinery.openapischema import Node
from ..http import Request
from .scope import RequestScope
from .yielding import phase_clock

Object = dict[str, Any]


async def decode_object(req: Request, scope: RequestScope, expected_kind: str | None = None) -> Object:
    body = await req.body()
    return await phase_clock(req).run(_decoded, req, scope, body, expected_kind or scope.info.kind)


def _decoded(req: Request, scope: RequestScope, body: bytes, kind: str) -> Object:
    content_type = req.headers.get("content-type", "")
    try:
        obj = serializer.decode_body(body, content_type)
    except errors.StatusError as err:
        if isinstance(err.__cause__, yamllimits.YAMLLimitError):  # no kind was read: transformDecodeError's form
            raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                                     f"{err.__cause__} ({_summarize(body)})") from None
        if isinstance(err.__cause__, deepjson.TooDeep):  # the kind is read by a json.Unmarshal that fails so
            raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind}): couldn't get "
                                     f"version/kind; json parse error: {err.__cause__} ({_summarize(body)})") from None
        raise
    if not isinstance(obj, dict):
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                                 f"couldn't get version/kind; json parse error: expected an object")
    if scope.schema is not None and kind == scope.info.kind:
        obj = _validate_fields(req, scope.schema, scope, body, content_type, obj)
    api_version = scope.info.api_version
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    if obj["apiVersion"] != api_version:
        raise errors.bad_request(f"the API version in the data ({obj['apiVersion']}) does not match the expected "
                                 f"API version ({api_version})")
    if obj["kind"] != kind:
        raise errors.bad_request(f'the object provided is unrecognized (must be of type {kind}): '
                                 f'kind "{obj["kind"]}" does not match the expected kind "{kind}"')
    meta = obj.get("metadata")
    if meta is None:
        obj["metadata"] = {}
    elif not isinstance(meta, dict):
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                                 f"metadata must be an object")
    return obj


def _summarize(body: bytes, limit: int = 30) -> str:
    """summarizeData: a JSON object's start as text, anything else's in hex."""
    if not body:
        return "<empty>"
    more = " ..." if len(body) > limit else ""
    if body[:1] == b"{":
        return body[:limit].decode("utf-8", "replace") + more
    return body[:limit].hex() + more


YAML_MEDIA_TYPES = (serializer.YAML, "application/x-yaml", "text/yaml")


def _validate_fields(req: Request, schema: Node, scope: RequestScope, body: bytes, content_type: str,
                     obj: Object) -> Object:
    """Typed decoding: a value of the wrong JSON type is a 400; unknown and duplicate fields are reported
    per fieldValidation, and unknown fields dropped."""
    kind = scope.info.kind
    media = serializer.media_type_of(content_type) if content_type else serializer.JSON
    body_format = "yaml" if media in YAML_MEDIA_TYPES else "" if media == serializer.PROTOBUF else "json"
    version = str(obj.get("apiVersion") or scope.info.api_version).rsplit("/", 1)[-1]
    decoded_as = f'{obj.get("kind") or kind} in version "{version}" cannot be handled as a {kind}'
    directive, warnings = req.param("fieldValidation"), req.values.setdefault("warnings", [])

    def reject(message: str) -> errors.StatusError:
        return errors.bad_request(f"{decoded_as}: {message}")

    if scope.custom_resource:
        return fieldvalidation.check_request_object(directive, body, body_format, obj, schema, warnings, reject, True)
    if body_format == "json":
        try:
            return _walked(directive, body, obj, schema, warnings, reject)
        except typedwalk.Unsupported:  # a schema the one walk does not handle: the walks it replaces
            pass
    # Typed decoding first, in place (nulls as zero values, []byte canonical): Go's decoding fails before any
    # strict (unknown or duplicate field) error, and the strict checks read only field names, which it leaves
    # as they are, and the body; so the object is walked once with its schema, not checked and then decoded.
    # Whether the body repeats a key is told from the object as sent (decoding drops null fields).
    repeated = fieldvalidation.may_have_duplicates(body, obj) if body_format == "json" else None
    wrong_type = schematypes.decode(obj, schema)
    if wrong_type is not None:
        raise reject(wrong_type)
    checked = fieldvalidation.check_request_object(directive, body, body_format, obj, schema, warnings, reject,
                                                   repeated_keys=repeated)
    if checked is not obj:  # decoded again from the body (a repeated key): typed decoding of that one too
        schematypes.decode(checked, schema)
    return checked


def _walked(directive: str, body: bytes, obj: Object, schema: Node, warnings: list[str],
            reject: Callable[[str], errors.StatusError]) -> Object:
    """A JSON body's typed decoding, unknown fields and repeated keys found in one walk of the object."""
    try:
        walked = typedwalk.walk(obj, schema)
    except schematypes.TypeMismatch as err:
        raise reject(str(err)) from None
    if walked.strings == fieldvalidation.body_strings(body):
        fieldvalidation.report_unknown_fields(directive, walked.unknown_paths(), warnings, reject)
        return obj
    # A repeated key: decoded again from the body, merging the repeats as Go does; then typed decoding of that.
    checked = fieldvalidation.check_request_object(directive, body, "json", obj, schema, warnings, reject,
                                                   repeated_keys=True)
    schematypes.decode(checked, schema)
    return checked


def ensure_namespace(obj: Object, scope: RequestScope, namespace: str) -> None:
    """rest.EnsureObjectNamespaceMatchesRequestNamespace."""
    meta = obj["metadata"]
    if not scope.info.namespaced:
        meta.pop("namespace", None)
        return
    object_namespace = meta.get("namespace") or ""
    if not object_namespace:
        meta["namespace"] = namespace
    elif object_namespace != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                 "the request")
