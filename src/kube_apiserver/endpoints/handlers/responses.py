"""Writing objects and errors in the negotiated representation (k8s responsewriters)."""

from __future__ import annotations

import logging
from typing import Any

from ...apimachinery import errors
from ...registry.table import partial_object_metadata
from .. import negotiation
from ..http import Request, Response
from . import listwriter
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
    return _write_transformed(req, status, transform(obj, media, scope, req), media)


def _write_transformed(req: Request, status: int, out: Object, media: negotiation.MediaType) -> Response:
    body = _as_protobuf(out) if media.media == negotiation.PROTOBUF else None
    if body is None:
        if media.media == negotiation.PROTOBUF:
            media = negotiation.MediaType(negotiation.JSON, media.convert, media.group, media.version)
        body = negotiation.encode(out, media)
    content_type = media.content_type if media.convert else media.media
    return Response(status, body, content_type, warning_headers(req))


async def write_list(req: Request, scope: RequestScope, status: int, obj: Object) -> Response:
    """A list as write_object writes it; a long one converted and encoded a slice at a time, yielding to the
    event loop between slices (listwriter), so it does not stall every other request while it is written."""
    if not listwriter.is_large(obj):
        return write_object(req, scope, status, obj)
    media = media_for(req, scope)
    yielder = listwriter.Yielder()
    out = await _transform_sliced(obj, media, scope, req, yielder)
    encoded = await _encode_sliced(out, media, yielder)
    if encoded is None:  # not laid out as the sliced encoders expect: encoded in one go, as before
        return _write_transformed(req, status, out, media)
    body, media = encoded
    content_type = media.content_type if media.convert else media.media
    return Response(status, body, content_type, warning_headers(req))


async def _transform_sliced(obj: Object, media: negotiation.MediaType, scope: RequestScope, req: Request,
                            yielder: listwriter.Yielder) -> Object:
    """transform() of a long list, its items converted a slice at a time."""
    items = obj["items"]
    if media.convert == "Table":
        include = req.param("includeObject") or "Metadata"
        head = scope.table.convert({**obj, "items": []}, include)
        head["rows"] = await listwriter.map_sliced(
            items, lambda part: scope.table.convert({"items": part}, include)["rows"], yielder)
        return head
    if media.convert in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata", {}),
                "items": await listwriter.map_sliced(
                    items, lambda part: [partial_object_metadata(i) for i in part], yielder)}
    return obj


async def _encode_sliced(out: Object, media: negotiation.MediaType, yielder: listwriter.Yielder
                         ) -> tuple[bytes, negotiation.MediaType] | None:
    """The converted list's bytes and media type, or None to encode it in one go. A list that cannot be
    written in protobuf is written in JSON, as _write_transformed does."""
    key = "rows" if out.get("kind") == "Table" else "items"
    if media.media == negotiation.PROTOBUF:
        if key != "items":
            return None
        try:
            body = await listwriter.encode_protobuf(out, yielder)
        except (ValueError, TypeError, AttributeError):  # as _as_protobuf: a stored value that does not fit
            log.warning("cannot write %s %s in protobuf; writing JSON", out.get("apiVersion"), out.get("kind"),
                        exc_info=True)
            body = None
        if body is not None:
            return body, media
        media = negotiation.MediaType(negotiation.JSON, media.convert, media.group, media.version)
    if media.media == negotiation.YAML:
        body = await listwriter.encode_yaml(out, key, yielder)
    elif media.media == negotiation.JSON and not media.pretty:
        body = await listwriter.encode_json(out, key, yielder)
    else:
        body = None
    return (body, media) if body is not None else None


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
