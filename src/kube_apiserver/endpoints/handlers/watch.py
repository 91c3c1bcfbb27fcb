"""WATCH: a chunked stream of JSON events, one per line, or of length-prefixed protobuf WatchEvents
(k8s handlers.serveWatch).

Bookmarks are queued in-band by the watcher, so one never overtakes an event still buffered; the
stream ends with a bookmark when it times out (if bookmarks were asked for), and cleanly on shutdown."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

from ...apimachinery import errors, serializer
from ...storage.interface import BOOKMARK, ERROR, ExpiredError, StorageError, WatchEvent
from .. import negotiation
from ..http import Request, Response, StreamingResponse
from .get import list_query
from .responses import media_for, transform, warning_headers
from .scope import RequestScope

BOOKMARK_INTERVAL = 60.0  # as the watch cache sends them: about once a minute
PROTOBUF_STREAM = "application/vnd.kubernetes.protobuf;stream=watch"


async def watch(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    query = list_query(req, watch=True)
    media = media_for(req, scope)
    watcher = await scope.storage.watch(ctx, query)
    timeout = float(query.timeout_seconds or scope.min_request_timeout * (1 + random.random()))
    content_type = media.content_type if media.convert else "application/json"
    if media.media == negotiation.PROTOBUF:
        content_type = PROTOBUF_STREAM
    return StreamingResponse(200, _events(scope, req, watcher, media, timeout, query.allow_watch_bookmarks),
                             content_type, warning_headers(req))


def _encode_protobuf(kind: str, obj: Any) -> bytes:
    """A length-prefixed WatchEvent frame; an object with no protobuf form (none is expected) as JSON."""
    from ...apimachinery import protobuf  # loaded by the first protobuf client

    if protobuf.has_kind(obj.get("apiVersion", ""), obj.get("kind", "")):
        try:
            return protobuf.watch_frame(kind, protobuf.encode(obj))
        except (ValueError, TypeError, AttributeError):
            pass  # a stored value that does not fit its field: the object as JSON, not a broken stream
    return protobuf.watch_frame(kind, serializer.encode_json(obj))


def _encode(scope: RequestScope, req: Request, media: Any, event: WatchEvent) -> bytes:
    if event.type == BOOKMARK:
        obj = {"kind": scope.info.kind, "apiVersion": scope.info.api_version, **event.object}
        if media.media == negotiation.PROTOBUF:
            return _encode_protobuf(BOOKMARK, obj)
        return serializer.encode_json({"type": BOOKMARK, "object": obj})
    if media.media == negotiation.PROTOBUF:
        if media.convert:
            return _encode_protobuf(event.type, transform(event.object, media, scope, req))
        frame = event.encoded_protobuf
        if frame is None:  # shared by every protobuf watcher given this same event
            frame = event.encoded_protobuf = _encode_protobuf(event.type, event.object)
        return frame
    if media.convert:
        return serializer.encode_json({"type": event.type, "object": transform(event.object, media, scope, req)})
    encoded = getattr(event, "encoded", None)
    if encoded is None:  # shared by every watcher given this same event
        encoded = serializer.encode_json({"type": event.type, "object": event.object})
        event.encoded = encoded
    return encoded


async def _events(scope: RequestScope, req: Request, watcher: Any, media: Any, timeout: float,
                  bookmarks: bool) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    next_bookmark = loop.time() + BOOKMARK_INTERVAL * (0.5 + random.random() / 2)
    closing = False
    stopping = asyncio.ensure_future(scope.stopping.wait())
    iterator = watcher.__aiter__()
    next_event: asyncio.Future[Any] | None = None
    try:
        while True:
            if next_event is None:
                next_event = asyncio.ensure_future(iterator.__anext__())
            wake = min(deadline, next_bookmark) if bookmarks and not closing else deadline
            await asyncio.wait({next_event, stopping}, timeout=max(wake - loop.time(), 0),
                               return_when=asyncio.FIRST_COMPLETED)
            if stopping.done():
                return  # the server is shutting down: end the stream cleanly
            if not next_event.done():
                now = loop.time()
                if bookmarks and not closing and now >= deadline:
                    closing = True  # one last bookmark, after what is already queued
                    watcher.request_bookmark()
                elif bookmarks and not closing and now >= next_bookmark:
                    next_bookmark = now + BOOKMARK_INTERVAL
                    watcher.request_bookmark()
                elif now >= deadline:
                    return
                continue
            future, next_event = next_event, None
            try:
                event = future.result()
            except StopAsyncIteration:
                return
            except StorageError as err:
                status = _storage_error_status(err)
                yield _encode_protobuf(ERROR, status) if media.media == negotiation.PROTOBUF \
                    else _event_bytes(ERROR, status)
                return
            yield _encode(scope, req, media, event)
            if closing and event.type == BOOKMARK:
                return
    finally:
        stopping.cancel()
        if next_event is not None:
            if next_event.done():
                if not next_event.cancelled():
                    next_event.exception()  # retrieved: nothing is left unobserved
            else:
                next_event.cancel()
        await watcher.stop()


def _event_bytes(kind: str, obj: Any) -> bytes:
    return serializer.encode_json({"type": kind, "object": obj})


def _storage_error_status(err: StorageError) -> dict[str, Any]:
    if isinstance(err, ExpiredError):
        return errors.expired(str(err)).status()
    return errors.internal_error(err).status()
