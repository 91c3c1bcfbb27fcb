"""The HTTP/1.1 connection protocol: uvicorn's httptools protocol with the limits Go's net/http server puts
on every connection, as kube-apiserver configures it (secure_serving.go), so that one client cannot hold
the server: request headers over MaxHeaderBytes are refused with 431; a connection that does not finish its
headers within ReadHeaderTimeout, or stays idle between requests past IdleTimeout, is closed; a request
Go's reader refuses (no request line version, two Host headers, no Host on HTTP/1.1, a broken chunk) is
answered 400 with Go's text and the connection closed. It also adds the ASGI TLS extension (the client
certificate) that uvicorn does not offer yet, and lets a streaming response (watch) write its chunks straight
to the transport (DirectChunkWriter) instead of one awaited ASGI send per event.

It relies on uvicorn's protocol internals (self.parser, self.cycle, self.transport, self.scope), pinned
by pyproject.toml and covered by tests/integration/test_http_hardening.py and the x509 tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# The bytes Go writes for a request it cannot read: a status line, these headers, and the status as the body.
_ERROR_HEADERS = b"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
# Go reads up to MaxHeaderBytes plus its bufio slack before it decides the headers are too large.
HEADER_SLACK_BYTES = 4096


def go_error_response(status: str) -> bytes:
    """net/http's answer to a request it could not read, e.g. "400 Bad Request: missing required Host header"."""
    return b"HTTP/1.1 " + status.encode() + _ERROR_HEADERS + status.encode()


BAD_REQUEST = go_error_response("400 Bad Request")
MISSING_HOST = go_error_response("400 Bad Request: missing required Host header")
UNSUPPORTED_VERSION = go_error_response("505 HTTP Version Not Supported: unsupported protocol version")
HEADERS_TOO_LARGE = go_error_response("431 Request Header Fields Too Large")


MAX_HEADER_BYTES = 1 << 20  # http.DefaultMaxHeaderBytes
READ_HEADER_TIMEOUT = 32.0  # kube-apiserver: just shy of the request timeout's upper bound
IDLE_TIMEOUT = 90.0  # kube-apiserver: matches http.DefaultTransport's keep-alive


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """Go's http.Server fields as kube-apiserver sets them; as in Go, a timeout of 0 is none and a header
    limit of 0 the default."""

    max_header_bytes: int = MAX_HEADER_BYTES
    read_header_timeout: float = READ_HEADER_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT


class _RefusedRequest(Exception):
    """Raised from a parser callback to stop parsing: the request is answered with `response` instead."""

    def __init__(self, response: bytes):
        super().__init__()
        self.response = response


JOIN_LIMIT = 64 << 10  # bodies up to this size are joined to their head: one TLS record's worth and more


class HeadWithBody:
    """The transport as a response's cycle writes to it: uvicorn writes a response's head and its body
    separately, which over TLS is two records (two encryptions here, two decryptions at the client) for
    every small answer. The head is held until the body's first write and leaves with it, or at the end of
    this turn of the loop when no body follows in it (a watch's head, a HEAD request)."""

    __slots__ = ("_transport", "_held", "_headed")

    def __init__(self, transport: asyncio.Transport):
        self._transport = transport
        self._held: bytes | None = None
        self._headed = False

    def write(self, data: bytes) -> None:
        if self._held is not None:
            if len(data) > JOIN_LIMIT:  # a big body (a long list) is not copied to go with its head
                self.flush()
            else:
                data, self._held = self._held + data, None
        elif not self._headed:
            self._headed = True
            self._held = data
            asyncio.get_running_loop().call_soon(self.flush)
            return
        self._transport.write(data)

    def flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class DirectChunkWriter:
    """The chunked body of the response in progress on one connection, once uvicorn has written its head:
    each write is one chunk on the transport, framed as uvicorn frames them, so the final ASGI send (the
    last chunk) still ends the body. It stops writing when the client goes away or the response ends."""

    __slots__ = ("_protocol", "_cycle", "_armed", "_on_writable")

    def __init__(self, protocol: HardenedHTTPProtocol, cycle: Any):
        self._protocol = protocol
        self._cycle = cycle
        self._armed = True
        self._on_writable: Callable[[], None] | None = None

    @property
    def open(self) -> bool:
        cycle = self._cycle
        return self._armed and not cycle.disconnected and not cycle.response_complete \
            and not self._protocol.transport.is_closing()

    @property
    def writable(self) -> bool:
        return not self._protocol.flow.write_paused

    def write(self, data: bytes) -> None:
        if self.open:
            self.write_open(data)

    def write_open(self, data: bytes) -> None:
        """write() when the caller has just seen the writer `open` (a watch delivery's flush)."""
        if data:  # through the cycle's transport: after the head it may still hold
            self._cycle.transport.write(b"%x\r\n%b\r\n" % (len(data), data))

    async def drain(self) -> None:
        await self._protocol.flow.drain()

    def on_writable(self, callback: Callable[[], None] | None) -> None:
        self._on_writable = callback

    def wake(self) -> None:
        if self._on_writable is not None:
            self._on_writable()

    def close(self) -> None:
        """No more direct writes: the response's end goes through uvicorn."""
        self._armed = False
        self._on_writable = None
        if self._protocol.direct_writer is self:
            self._protocol.direct_writer = None


class HardenedHTTPProtocol(HttpToolsProtocol):
    """One connection. The header timer runs from the connection (or the first byte of the next request on
    a kept-alive one) until the headers are complete; uvicorn's keep-alive timer is Go's idle timeout."""

    def __init__(self, *args: Any, limits: ConnectionLimits = ConnectionLimits(), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.limits = limits
        self.timeout_keep_alive = limits.idle_timeout or 1e9  # uvicorn arms it after each response
        self._header_timer: asyncio.TimerHandle | None = None
        # Bytes read since the current request began, until its headers end (None outside headers).
        self._header_bytes: int | None = None
        self._chunk_size = 0
        self._refused = False
        self.direct_writer: DirectChunkWriter | None = None

    def chunk_writer(self) -> DirectChunkWriter | None:
        """A writer for the chunked body of the response whose head was just sent (None if it is not one)."""
        cycle = self.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete or cycle.chunked_encoding is not True \
                or self.scope.get("method") == "HEAD":
            return None
        self.direct_writer = DirectChunkWriter(self, cycle)
        return self.direct_writer

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.direct_writer is not None:
            self.direct_writer.wake()

    # ---- connection ----

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)
        if self.direct_writer is not None:
            self.direct_writer.wake()  # its writer sees the client gone

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._unset_keepalive_if_required()
        if self.cycle is None or self.cycle.response_complete:
            self._arm_header_timer()  # bytes between requests start the next one's header deadline
        self._chunk_size = len(data)
        if self._header_bytes is not None:
            self._header_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError as err:
            refused = err.__context__
            self._refuse(refused.response if isinstance(refused, _RefusedRequest) else BAD_REQUEST)
            return
        if self._header_bytes is not None and self._header_bytes > self._header_limit():
            self._refuse(HEADERS_TOO_LARGE)  # still in the headers: what the parser holds stays bounded

    def _unsupported_upgrade_warning(self) -> None:
        """Websocket upgrades reach the handler, which answers those it speaks (exec and attach of
        simulated pods, endpoints/http.UpgradeResponse) and refuses the others: no warning for them."""
        if self._get_upgrade() != b"websocket":
            super()._unsupported_upgrade_warning()

    # ---- parser callbacks ----

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope["extensions"] = {"kube.connection": self}  # the ASGI app asks it for a DirectChunkWriter
        self._arm_header_timer()  # a pipelined request's headers are read under the deadline too
        # This read's bytes: what arrived of the request so far, or a little more.
        self._header_bytes = self._chunk_size

    def on_headers_complete(self) -> None:
        self._header_bytes = None
        self._cancel_header_timer()
        refusal = HEADERS_TOO_LARGE if self._header_size() > self._header_limit() else self._refusal()
        if refusal is not None:
            raise _RefusedRequest(refusal)
        super().on_headers_complete()
        if self.cycle is not None:  # its task has not run yet: no byte of the response is written
            self.cycle.transport = HeadWithBody(self.transport)

    def _refusal(self) -> bytes | None:
        """What Go's readRequest (request.go) and the server's checks (server.go) answer, in their order."""
        version = self.parser.get_http_version()
        if version == "0.9":  # a request line without a version: "malformed HTTP request"
            return BAD_REQUEST
        hosts = sum(1 for name, _ in self.headers if name == b"host")
        if hosts > 1:  # "too many Host headers" (an error without a status: the plain 400)
            return BAD_REQUEST
        if version not in ("1.0", "1.1"):
            return UNSUPPORTED_VERSION
        if version == "1.1" and hosts == 0 and self.parser.get_method() != b"CONNECT":
            return MISSING_HOST
        return None

    def _header_size(self) -> int:
        """The request line and headers as sent (give or take optional whitespace)."""
        line = len(self.parser.get_method()) + len(self.url) + len(" HTTP/1.1\r\n")
        return line + sum(len(name) + len(value) + 4 for name, value in self.headers) + 2

    def _header_limit(self) -> int:
        return (self.limits.max_header_bytes or MAX_HEADER_BYTES) + HEADER_SLACK_BYTES

    # ---- helpers ----

    def shutdown(self) -> None:
        self._write_held_head()  # uvicorn closes a connection whose response is complete, underneath
        super().shutdown()

    def timeout_keep_alive_handler(self) -> None:
        self._write_held_head()
        super().timeout_keep_alive_handler()

    def _write_held_head(self) -> None:
        """A head the response's cycle holds (HeadWithBody) leaves before what the connection itself writes or
        its close: a HEAD request's answer, held to the end of the loop's turn, was dropped by a close in it."""
        if self.cycle is not None and isinstance(self.cycle.transport, HeadWithBody):
            self.cycle.transport.flush()

    def _refuse(self, response: bytes) -> None:
        """Answer as Go does and close: the rest of what the client sends is not read."""
        self._write_held_head()  # the answer before it first
        self._refused = True
        self._cancel_header_timer()
        self._unset_keepalive_if_required()
        if self.cycle is not None and self.cycle.response_started and not self.cycle.response_complete:
            self.transport.close()  # an answer is being written: another cannot be put in its middle
            return
        if self.cycle is not None:
            self.cycle.disconnected = True  # the application's answer, if any, goes nowhere
            self.cycle.message_event.set()
        self.transport.write(response)
        self.transport.close()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None and self.limits.read_header_timeout > 0:
            self._header_timer = self.loop.call_later(self.limits.read_header_timeout, self._header_timed_out)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        """Go closes without an answer; abort, not close: a client that stalls would not finish a TLS close."""
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.abort()


class TLSScopeHTTPProtocol(HardenedHTTPProtocol):
    """Adds the ASGI TLS extension: the verified client certificate (DER), for x509 authentication."""

    def on_message_begin(self) -> None:
        super().on_message_begin()
        ssl_object = self.transport.get_extra_info("ssl_object")
        if ssl_object is not None:
            der = ssl_object.getpeercert(binary_form=True)
            self.scope["extensions"]["tls"] = {"client_cert_chain": [der] if der else [],
                                               "tls_version": ssl_object.version()}
