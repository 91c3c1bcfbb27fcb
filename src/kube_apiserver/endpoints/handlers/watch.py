"""WATCH: a chunked stream of JSON events, one per line, or of length-prefixed protobuf WatchEvents
(k8s handlers.serveWatch).

Bookmarks are queued in-band by the watcher, so one never overtakes an event still buffered; the
stream ends with a bookmark when it times out (if bookmarks were asked for), and cleanly on shutdown.

Served over HTTP from the watch cache, events are not yielded one by one: the watcher calls back when it
has some, and what it has is encoded (once per event and format, shared by every watcher) and written to
the connection as one chunk (_DirectDelivery), with no task switch per event and watcher. A connection
that does not take them is not waited for: the watcher's buffer fills and it is closed, as a slow
iterator's would be."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

from ...apimachinery import errors, serializer
from ...storage.interface import BOOKMARK, ERROR, ExpiredError, StorageError, WatchEvent
from .. import negotiation
from ..http import ChunkWriter, Request, Response, StreamingResponse
from .get import list_query
from .responses import media_for, transform, warning_headers
from .scope import RequestScope

BOOKMARK_INTERVAL = 60.0  # as the watch cache sends them: about once a minute
PROTOBUF_STREAM = "application/vnd.kubernetes.protobuf;stream=watch"
# Events (or initial-state items looked at) per write: bounds one callback's work; the loop is handed back
# between writes, so a watch starting with 50,000 objects never stalls the others.
DIRECT_BATCH = 256


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


def _encoder(scope: RequestScope, req: Request, media: Any) -> Callable[[WatchEvent], bytes]:
    """_encode for one watch; for plain JSON (nearly every client) a shortcut to the shared encoding."""
    if media.media == negotiation.PROTOBUF or media.convert:
        return lambda event: _encode(scope, req, media, event)

    def encode_json(event: WatchEvent) -> bytes:
        encoded = event.encoded
        if encoded is None:  # the first watcher given this event, or a bookmark (never shared)
            encoded = _encode(scope, req, media, event)
        return encoded

    return encode_json


class _WatchClock:
    """A watch's timers: a bookmark every BOOKMARK_INTERVAL (the first after a random part of it), and at
    the timeout one last bookmark after what is queued (when bookmarks were asked for), else the end."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float, bookmarks: bool):
        self.loop = loop
        self.deadline = loop.time() + timeout
        self.next_bookmark = loop.time() + BOOKMARK_INTERVAL * (0.5 + random.random() / 2)
        self.bookmarks = bookmarks
        self.closing = False

    def wait(self) -> float:
        """Seconds until the next timer."""
        wake = min(self.deadline, self.next_bookmark) if self.bookmarks and not self.closing else self.deadline
        return max(wake - self.loop.time(), 0)

    def tick(self, watcher: Any) -> str:
        """What is due now: "closing" (the last bookmark was asked for), "bookmark", "end" or ""."""
        now = self.loop.time()
        if self.bookmarks and not self.closing and now >= self.deadline:
            self.closing = True
            watcher.request_bookmark()
            return "closing"
        if self.bookmarks and not self.closing and now >= self.next_bookmark:
            self.next_bookmark = now + BOOKMARK_INTERVAL
            watcher.request_bookmark()
            return "bookmark"
        return "end" if now >= self.deadline else ""


async def _events(scope: RequestScope, req: Request, watcher: Any, media: Any, timeout: float,
                  bookmarks: bool) -> AsyncIterator[bytes]:
    clock = _WatchClock(asyncio.get_running_loop(), timeout, bookmarks)
    writer = req.chunk_writer
    if writer is not None and writer.open and hasattr(watcher, "take"):
        try:
            await _deliver_directly(scope, req, watcher, media, writer, clock)
        finally:
            await watcher.stop()
        return
    stopping = asyncio.ensure_future(scope.stopping.wait())
    iterator = watcher.__aiter__()
    next_event: asyncio.Future[Any] | None = None
    drain = getattr(watcher, "take", None)
    try:
        while True:
            if next_event is None and drain is not None and watcher.pending and not stopping.done() \
                    and clock.wait() > 0:
                # What the watcher holds already (a batch of a thousand, as a restore writes) is yielded
                # as it is, one chunk per event, without a task and a wait per event; the loop is handed
                # back between DIRECT_BATCHes.
                for event in drain(DIRECT_BATCH):
                    yield _encode(scope, req, media, event)
                    if clock.closing and event.type == BOOKMARK:
                        return
                await asyncio.sleep(0)
                continue
            if next_event is None:
                next_event = asyncio.ensure_future(iterator.__anext__())
            await asyncio.wait({next_event, stopping}, timeout=clock.wait(), return_when=asyncio.FIRST_COMPLETED)
            if stopping.done():
                return  # the server is shutting down: end the stream cleanly
            if not next_event.done():
                if clock.tick(watcher) == "end":
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
            if clock.closing and event.type == BOOKMARK:
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


async def _deliver_directly(scope: RequestScope, req: Request, watcher: Any, media: Any, writer: ChunkWriter,
                            clock: _WatchClock) -> None:
    """The stream written by a _DirectDelivery; this task only keeps the clock: bookmarks, the timeout
    (after a last bookmark, if asked for) and shutdown."""
    delivery = _DirectDelivery(writer, watcher, _encoder(scope, req, media), asyncio.get_running_loop())
    stopping = asyncio.ensure_future(scope.stopping.wait())
    try:
        delivery.start()
        while True:
            await asyncio.wait({delivery.done, stopping}, timeout=clock.wait(), return_when=asyncio.FIRST_COMPLETED)
            if stopping.done():
                return  # the server is shutting down: end the stream cleanly
            if delivery.done.done():
                delivery.done.result()  # the watcher ended, the client left, or encoding failed
                return
            due = clock.tick(watcher)
            if due == "closing":
                delivery.end_after_bookmark = True  # the stream ends after that last bookmark
            elif due == "end":
                return
    finally:
        stopping.cancel()
        delivery.stop()


class _DirectDelivery:
    """Moves a watcher's events to its connection from callbacks: each wake-up (an event buffered, the
    connection writable again) schedules one flush, which writes everything ready as one chunk, so what
    piles up for one watcher while the loop is busy goes out in one write. The initial state goes out
    DIRECT_BATCH items per flush, one flush per loop turn, as fast as the connection takes it."""

    def __init__(self, writer: ChunkWriter, watcher: Any, encode: Callable[[WatchEvent], bytes],
                 loop: asyncio.AbstractEventLoop):
        self.writer = writer
        self.watcher = watcher
        self.encode = encode
        self.loop = loop
        self.done: asyncio.Future[None] = loop.create_future()
        self.end_after_bookmark = False  # the timeout's last bookmark ends the stream
        self._scheduled = False
        self._ended = False  # `done` is set (a plain flag: checked for every event)

    def start(self) -> None:
        self.watcher.notify(self.schedule)
        self.writer.on_writable(self.schedule)
        self.schedule()

    def stop(self) -> None:
        self.watcher.notify(None)
        self.writer.on_writable(None)
        self._finish()

    def schedule(self) -> None:
        if not self._scheduled and not self._ended:
            self._scheduled = True
            self.loop.call_soon(self._flush)

    def _finish(self, error: BaseException | None = None) -> None:
        self._ended = True
        if not self.done.done():
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(error)

    def _flush(self) -> None:
        self._scheduled = False
        writer, watcher = self.writer, self.watcher
        if self._ended or not writer.writable:
            return  # a connection that drains wakes us; meanwhile the watcher's buffer bounds the backlog
        if not writer.open:
            self._finish()  # the client is gone
            return
        try:
            events = watcher.take(DIRECT_BATCH)
            if len(events) == 1 and not self.end_after_bookmark:  # the usual case: one new event
                writer.write_open(self.encode(events[0]))
            elif events and self._write_all(events):
                return
        except Exception as err:  # noqa: BLE001 - ends the stream, as an error in the iterator does
            self._finish(err)
            return
        if watcher.pending:
            self.schedule()  # the rest on the next loop turn
        elif watcher.ended:
            self._finish()

    def _write_all(self, events: list[WatchEvent]) -> bool:
        """Writes the events as one chunk; True if the stream ended with them (the timeout's bookmark)."""
        encode = self.encode
        chunks = []
        for event in events:
            chunks.append(encode(event))
            if self.end_after_bookmark and event.type == BOOKMARK:
                self.writer.write(b"".join(chunks))
                self._finish()
                return True
        self.writer.write(b"".join(chunks))
        return False


def _event_bytes(kind: str, obj: Any) -> bytes:
    return serializer.encode_json({"type": kind, "object": obj})


def _storage_error_status(err: StorageError) -> dict[str, Any]:
    if isinstance(err, ExpiredError):
        return errors.expired(str(err)).status()
    return errors.internal_error(err).status()
