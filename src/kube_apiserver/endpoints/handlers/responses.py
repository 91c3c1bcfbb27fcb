"""Writing objects and errors in the negotiated representation (k8s responsewriters)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, serializer
from ...registry.table import partial_object_metadata
from .. import negotiation
from ..http import Request, Response
from .scope import RequestScope

Object = dict[str, Any]


def media_for(req: Request) -> negotiation.MediaType:
    media = negotiation.negotiate(req.headers.get("accept", ""), negotiation.RESOURCE_CONVERSIONS)
    if req.param("pretty") in ("true", "1"):
        media = negotiation.MediaType(media.media, media.convert, media.group, media.version, True)
    return media


def transform(obj: Object, media: negotiation.MediaType, scope: RequestScope, req: Request) -> Object:
    """Converts an object or list to what Accept asked for: itself, a Table or PartialObjectMetadata."""
    if media.convert == "Table":
        if obj.get("kind") == "Status":
            return obj
        return scope.table.convert(obj, req.param("includeObject") or "Metadata")
    if media.convert in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        if isinstance(obj.get("items"), list):
            return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj.get("metadata", {}), "items": [partial_object_metadata(i) for i in obj["items"]]}
        return partial_object_metadata(obj)
    return obj


def write_object(req: Request, scope: RequestScope, status: int, obj: Object) -> Response:
    media = media_for(req)
    if media.convert == "PartialObjectMetadataList" and not isinstance(obj.get("items"), list):
        raise errors.not_acceptable(negotiation.ACCEPTED)
    body = negotiation.encode(transform(obj, media, scope, req), media)
    content_type = media.content_type if media.convert else media.media
    return Response(status, body, content_type, _warning_headers(req))


def _warning_headers(req: Request) -> list[tuple[str, str]]:
    """Warning: 299 - "text", quoted as k8s.io/apimachinery/pkg/util/net.NewWarningHeader quotes it."""
    return [("warning", '299 - "' + w.replace("\\", "\\\\").replace('"', '\\"') + '"')
            for w in req.values.get("warnings", ())]


def write_status_error(req: Request, err: errors.StatusError) -> Response:
    body = err.status()
    token = getattr(err, "continue_token", "")
    if token:
        body["metadata"] = {"continue": token}
    try:
        media = negotiation.negotiate(req.headers.get("accept", ""), negotiation.RESOURCE_CONVERSIONS)
    except errors.StatusError:
        media = negotiation.DEFAULT
    encoded = serializer.encode_yaml(body) if media.media == negotiation.YAML else serializer.encode_json(body)
    headers = []
    retry = (err.details or {}).get("retryAfterSeconds")
    if retry:
        headers.append(("retry-after", str(retry)))
    return Response(err.code, encoded, media.media, headers)
