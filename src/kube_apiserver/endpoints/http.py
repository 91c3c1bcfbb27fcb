"""The request and response the handler chain passes around; the server's ASGI adapter makes them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import parse_qs

Receive = Callable[[], Awaitable[dict[str, Any]]]

# kube-apiserver's MaxRequestBodyBytes: the largest body a write request may send (a 1.5 MiB etcd value
# can be twice as large as JSON).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


class Request:
    __slots__ = ("method", "path", "query_string", "headers", "_receive", "_body", "_query", "info", "user",
                 "values", "remote_addr", "disconnected", "client_cert", "body_read", "chunk_writer")

    def __init__(self, method: str, path: str, query_string: bytes, headers: dict[str, str],
                 receive: Receive | None = None, body: bytes | None = None, remote_addr: str = "",
                 client_cert: bytes | None = None):
        self.method = method
        self.path = path
        self.query_string = query_string
        self.headers = headers  # lower-case names; repeated headers joined with ", "
        self._receive = receive
        self._body = body
        self._query: dict[str, list[str]] | None = None
        self.info: Any = None  # RequestInfo, set by the request-info filter
        self.user: Any = None  # UserInfo, set by the authentication filter
        self.values: dict[str, Any] = {}
        self.remote_addr = remote_addr
        self.disconnected = False
        self.client_cert = client_cert  # the verified client certificate (DER), if one was presented
        self.body_read = body is not None or receive is None  # all of the body has arrived
        # Set by the HTTP layer once a streaming response's head is out: its body may be written directly.
        self.chunk_writer: ChunkWriter | None = None

    @property
    def query(self) -> dict[str, list[str]]:
        if self._query is None:
            # Most requests have no query: skip parse_qs (and its decode) for those.
            self._query = parse_qs(self.query_string.decode("latin-1"), keep_blank_values=True) \
                if self.query_string else {}
        return self._query

    def param(self, name: str, default: str = "") -> str:
        values = self.query.get(name)
        return values[0] if values else default

    @property
    def received_body(self) -> bytes | None:
        """The body if it has been read (None if the handler did not read it)."""
        return self._body

    @property
    def body_size(self) -> int:
        """The body's length: as read, or as declared until it is."""
        if self._body is not None:
            return len(self._body)
        declared = self.headers.get("content-length", "")
        return int(declared) if declared.isdigit() else 0

    async def body(self, limit: int = MAX_REQUEST_BODY_BYTES) -> bytes:
        """The whole body; over `limit` bytes it is refused (413) without reading the rest, and the server
        closes the connection after the answer rather than read what the client still sends."""
        if self._body is None:
            declared = self.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _too_large(limit)
            chunks: list[bytes] = []
            size = 0
            while self._receive is not None:
                message = await self._receive()
                if message["type"] == "http.disconnect":
                    self.disconnected = True
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    self.body_read = True
                    break
            self._body = b"".join(chunks)
        return self._body


def _too_large(limit: int) -> Exception:
    from ..apimachinery import errors
    return errors.request_entity_too_large(f"limit is {limit}")


class ChunkWriter(Protocol):
    """The chunked body of the response being sent on a connection, written without a per-chunk await:
    a watch writes what its watcher has ready from callbacks, coalesced, instead of one send per event."""

    @property
    def open(self) -> bool:
        """Whether writes still reach the client (false once it is gone or the response has ended)."""

    @property
    def writable(self) -> bool:
        """False while the connection's write buffer is over its high-water mark (the client reads slowly)."""

    def write(self, data: bytes) -> None:
        """One chunk of the body (nothing once closed)."""

    def write_open(self, data: bytes) -> None:
        """write() for a caller that has just seen `open` true, sparing the check."""

    async def drain(self) -> None:
        """Until the connection is writable again."""

    def on_writable(self, callback: Callable[[], None] | None) -> None:
        """`callback` is called when the connection becomes writable again or goes away."""


class Response:
    __slots__ = ("status", "body", "headers")

    def __init__(self, status: int, body: bytes = b"", content_type: str = "application/json",
                 headers: list[tuple[str, str]] | None = None):
        self.status = status
        self.body = body
        self.headers = [("content-type", content_type)] if content_type else []
        if headers:
            self.headers.extend(headers)


class StreamingResponse(Response):
    """A response whose body is produced as it goes (watch): sent chunked, flushed per chunk."""

    __slots__ = ("chunks",)

    def __init__(self, status: int, chunks: AsyncIterator[bytes], content_type: str,
                 headers: list[tuple[str, str]] | None = None):
        super().__init__(status, b"", content_type, headers)
        self.chunks = chunks


class UpgradeResponse(Response):
    """A 101 Switching Protocols answer (an exec's websocket): after its head the connection carries
    `frames`, written as they come, then it is closed; no HTTP follows on it."""

    __slots__ = ("frames",)

    def __init__(self, headers: list[tuple[str, str]], frames: AsyncIterator[bytes]):
        super().__init__(101, b"", "", headers)
        self.frames = frames


Handler = Callable[[Request], Awaitable[Response]]


def text(status: int, body: str) -> Response:
    return Response(status, body.encode(), "text/plain; charset=utf-8",
                    [("x-content-type-options", "nosniff")])
