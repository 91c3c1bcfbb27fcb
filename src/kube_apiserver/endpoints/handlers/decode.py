"""Reading a request body into an object of the endpoint's kind (k8s create.go/update.go decoding)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, serializer
from ..http import Request
from .scope import RequestScope

Object = dict[str, Any]


async def decode_object(req: Request, scope: RequestScope, expected_kind: str | None = None) -> Object:
    body = await req.body()
    obj = serializer.decode_body(body, req.headers.get("content-type", ""))
    kind = expected_kind or scope.info.kind
    if not isinstance(obj, dict):
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                                 f"couldn't get version/kind; json parse error: expected an object")
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
