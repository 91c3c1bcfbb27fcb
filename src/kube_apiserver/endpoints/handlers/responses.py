"""Writing objects and errors in the negotiated representation (k8s responsewriters)."""

from __future__ import annotations

import logging
from typing import Any

from ...apimachinery import errors
from ...registry.table import partial_object_metadata
from .. import negotiation
from ..http import Request, Response
from .scope import RequestScope

Object = dict[str, Any]
log = logging.getLogger("kube_apiserver")


def media_for(req: Request, scope: RequestScope) -> negotiation.MediaType:
    # Built-in kinds have a protobuf form; custom resources' serializers offer only JSON and YAML.
    try:
        media = negotiation.negotiate(req.headers.get("accept", ""), scope.conversions,
                                      protobuf=not scope.custom_resource)
    except errors.StatusError:
        if scope.custom_resource:
            raise errors.not_acceptable([negotiation.JSON, negotiation.YAML]) from None
        raise
    if not media.pretty and media.media == negotiation.JSON and negotiation.pretty_requested(req):
        media = negotiation.MediaType(media.media, media.convert, media.group, media.version, True)
    return media


def _as_protobuf(obj: Object) -> bytes | None:
    """The object in protobuf; None if its kind has no protobuf form here or a stored value does not fit
    its field (then JSON is written rather than a 500)."""
    from ...apimachinery import protobuf  # loaded by the first protobuf client

    if not protobuf.has_kind(obj.get("apiVersion", ""), obj.get("kind", "")):
        return None
    try:
        return protobuf.encode(obj)
    except (ValueError, TypeError, AttributeError):  # binascii.Error is a ValueError
        log.warning("cannot write %s %s in protobuf; writing JSON", obj.get("apiVersion"), obj.get("kind"),
                    exc_info=True)
        return None


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
    media = media_for(req, scope)
    if media.convert == "PartialObjectMetadataList" and not isinstance(obj.get("items"), list):
        raise errors.not_acceptable(negotiation.ACCEPTED)
    out = transform(obj, media, scope, req)
    body = _as_protobuf(out) if media.media == negotiation.PROTOBUF else None
    if body is None:
        if media.media == negotiation.PROTOBUF:
            media = negotiation.MediaType(negotiation.JSON, media.convert, media.group, media.version)
        body = negotiation.encode(out, media)
    content_type = media.content_type if media.convert else media.media
    return Response(status, body, content_type, warning_headers(req))


TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256


def _warning_header(text: str) -> tuple[str, str]:
    """Warning: 299 - "text", quoted as k8s.io/apimachinery/pkg/util/net.NewWarningHeader quotes it."""
    return "warning", '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def warning_headers(req: Request) -> list[tuple[str, str]]:
    """The request's warnings as the warning recorder (filters.WithWarningRecorder) writes them: each text
    once, in order. Once they pass 4096 characters in all, those so far are cut to 256 characters each, and
    of the rest (cut too) only those that come while fewer than 4096 are written."""
    warnings = req.values.get("warnings")
    if not warnings:
        return []  # the usual case: nothing to dedupe or measure
    texts = list(dict.fromkeys(w for w in warnings if w))
    total, overflow = 0, None
    for index, text in enumerate(texts):
        total += len(text)
        if total > TRUNCATE_AT_TOTAL_RUNES:
            overflow = index
            break
    if overflow is None:
        return [_warning_header(t) for t in texts]
    headers, written = [], 0
    for index, text in enumerate(texts):
        if index > overflow and written >= TRUNCATE_AT_TOTAL_RUNES:
            break
        text = text[:TRUNCATE_ITEM_RUNES]
        written += len(text)
        headers.append(_warning_header(text))
    return headers


def _status_as_protobuf(req: Request, accept: str) -> bool:
    """Whether a Status may be written as protobuf: not by a custom resource's handler, whose serializer
    has none (filters' errors, 401 and 403 included, and built-in resources' have it)."""
    return "protobuf" in accept and not req.values.get("custom_resource")


def write_status_error(req: Request, err: errors.StatusError) -> Response:
    body = err.status()
    token = getattr(err, "continue_token", "")
    if token:
        body["metadata"] = {"continue": token}
    accept = req.headers.get("accept", "")
    try:
        media = negotiation.negotiate(accept, negotiation.RESOURCE_CONVERSIONS, _status_as_protobuf(req, accept))
    except errors.StatusError:
        media = negotiation.DEFAULT
    media = negotiation.MediaType(media.media, pretty=media.pretty or negotiation.pretty_requested(req))
    encoded = negotiation.encode(body, media)
    # Warnings gathered before the failure (admission, deprecation) are sent with it, as Kubernetes does.
    headers = warning_headers(req)
    retry = (err.details or {}).get("retryAfterSeconds")
    if retry:
        headers.append(("retry-after", str(retry)))
    return Response(err.code, encoded, media.media, headers)
