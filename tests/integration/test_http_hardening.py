"""HTTP hardening as Go's net/http server has it (issue 9, item 4), over raw TLS sockets: headers over
MaxHeaderBytes (1 MiB + Go's 4 KiB slack) 431; no Host or two on HTTP/1.1, an HTTP/0.9 request line, an
absurd chunk length 400 with Go's text; each answered and the connection closed. Connections that do not
finish their headers (ReadHeaderTimeout) or stay idle (IdleTimeout) are closed: a server of the same
serving code with 1 s timeouts shows them."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import uvloop

from kube_apiserver.endpoints.http import Request, Response
from kube_apiserver.server.certs import ensure_self_signed_serving_certs
from kube_apiserver.server.serving import HTTPServer, SecureServingInfo, serve

GO_400 = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"400 Bad Request"
)
GO_431 = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n431 Request Header Fields Too Large"
)


def connect(port: int, ca_file: str, timeout: float = 10) -> ssl.SSLSocket:
    tls = ssl.create_default_context(cafile=ca_file)
    return tls.wrap_socket(
        socket.create_connection(("127.0.0.1", port), timeout=timeout), server_hostname="127.0.0.1"
    )


def read_until_closed(conn: ssl.SSLSocket) -> bytes:
    """Everything the server sends until it closes; a socket timeout (the server kept it open) fails."""
    received = b""
    while True:
        try:
            chunk = conn.recv(65536)
        except (ConnectionResetError, ssl.SSLEOFError, BrokenPipeError):
            return received
        if not chunk:
            return received
        received += chunk


def exchange(port: int, ca_file: str, request: bytes) -> bytes:
    with connect(port, ca_file) as conn:
        try:
            conn.sendall(request)
        except (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError):
            pass  # answered and closed before all of it was sent
        return read_until_closed(conn)


# ---- the kube-apiserver ----


def test_missing_host_on_http11_is_400_and_closes(server):
    answer = exchange(server.port, server.ca_file, b"GET /version HTTP/1.1\r\n\r\n")
    assert answer == (
        b"HTTP/1.1 400 Bad Request: missing required Host header\r\nContent-Type: text/plain; "
        b"charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request: missing required Host header"
    )
    http10 = exchange(server.port, server.ca_file, b"GET /version HTTP/1.0\r\n\r\n")
    assert http10.startswith(b"HTTP/1.1 200 OK\r\n")  # HTTP/1.0 does not need one


def test_two_host_headers_are_400_and_close(server):
    assert (
        exchange(server.port, server.ca_file, b"GET /version HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
        == GO_400
    )


def test_http09_request_line_is_400_and_closes(server):
    assert exchange(server.port, server.ca_file, b"GET /version\r\n\r\n") == GO_400


def test_absurd_chunk_length_is_400_and_closes(server):
    request = (
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: a\r\n"
        + f"Authorization: Bearer {server.token}\r\n".encode()
        + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"fffffffffffffffffffff\r\n{}\r\n0\r\n\r\n"
    )
    assert exchange(server.port, server.ca_file, request) == GO_400


def test_headers_over_1mib_are_431_and_close(server):
    big = b"GET /version HTTP/1.1\r\nHost: a\r\nX-Big: " + b"a" * ((1 << 20) + 4096) + b"\r\n\r\n"
    assert exchange(server.port, server.ca_file, big) == GO_431
    # One that never ends is refused as soon as it is over the limit, not read for ever.
    with connect(server.port, server.ca_file) as conn:
        conn.sendall(b"GET /version HTTP/1.1\r\nHost: a\r\nX-Endless: ")
        for _ in range(64):  # up to 4 MiB, well past the limit
            try:
                conn.sendall(b"a" * 65536)
            except (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError):
                break
        answer = read_until_closed(conn)
    assert answer == GO_431


def test_headers_under_1mib_are_served(server):
    headers = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(1000))  # 1 MB in 1,000 headers
    request = b"GET /version HTTP/1.1\r\nHost: a\r\nConnection: close\r\n" + headers + b"\r\n"
    assert exchange(server.port, server.ca_file, request).startswith(b"HTTP/1.1 200 OK\r\n")


def test_chunked_body_over_3mib_is_413_and_closes(server):
    """The body limit holds for a body of unknown length too, and the rest of it is not read."""
    head = (
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: a\r\n"
        + f"Authorization: Bearer {server.token}\r\n".encode()
        + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    with connect(server.port, server.ca_file) as conn:
        conn.sendall(head)
        for _ in range(64):  # 4 MiB
            try:
                conn.sendall(chunk)
            except (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError):
                break
        answer = read_until_closed(conn)
    assert answer.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
    assert b"\r\nconnection: close\r\n" in answer.lower()
    assert (
        b'"message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge"' in answer
    )


def test_defaults_are_go_and_kube_apiserver_values():
    info = SecureServingInfo("127.0.0.1", 0, "", "")
    assert (info.max_header_bytes, info.read_header_timeout, info.idle_timeout) == (1 << 20, 32.0, 90.0)


# ---- the same serving code with 1 s timeouts ----


@dataclass
class ShortTimeoutServer:
    port: int
    ca_file: str


@pytest.fixture(scope="module")
def short_timeouts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShortTimeoutServer]:
    certs = ensure_self_signed_serving_certs(str(tmp_path_factory.mktemp("certs")), [], ["127.0.0.1"])
    info = SecureServingInfo(
        "127.0.0.1", 0, certs.cert_file, certs.key_file, read_header_timeout=1.0, idle_timeout=1.0
    )
    started = threading.Event()
    state: dict[str, object] = {}

    async def answer(req: Request) -> Response:
        return Response(200, b"ok", "text/plain")

    async def main() -> None:
        http = await serve(answer, info)
        state["http"], state["loop"], state["stop"] = http, asyncio.get_running_loop(), asyncio.Event()
        started.set()
        await state["stop"].wait()  # type: ignore[attr-defined]
        await http.shutdown()

    thread = threading.Thread(target=lambda: uvloop.run(main()), daemon=True)
    thread.start()
    assert started.wait(30)
    http: HTTPServer = state["http"]  # type: ignore[assignment]
    yield ShortTimeoutServer(http.port, certs.ca_file)
    state["loop"].call_soon_threadsafe(state["stop"].set)  # type: ignore[attr-defined]
    thread.join(30)


def read_ok(conn: ssl.SSLSocket) -> bytes:
    """One answer of the short-timeout server (headers and body come in two TLS records)."""
    received = b""
    while not received.endswith(b"\r\n\r\nok"):
        chunk = conn.recv(65536)
        assert chunk, received
        received += chunk
    return received


def closed_after(conn: ssl.SSLSocket) -> float:
    started = time.monotonic()
    read_until_closed(conn)
    return time.monotonic() - started


def test_connection_without_a_request_is_closed(short_timeouts):
    with connect(short_timeouts.port, short_timeouts.ca_file) as conn:
        print(f"closed after {closed_after(conn):.2f}s")


def test_unfinished_headers_are_closed_without_an_answer(short_timeouts):
    with connect(short_timeouts.port, short_timeouts.ca_file) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n")
        assert read_until_closed(conn) == b""


def test_slowly_sent_headers_do_not_extend_the_deadline(short_timeouts):
    """A byte every 0.2 s keeps the connection busy but the headers never finish: ReadHeaderTimeout is a
    deadline for the whole header, not an idle timer."""
    with connect(short_timeouts.port, short_timeouts.ca_file) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 8:
            try:
                conn.sendall(b"X")
                time.sleep(0.2)
            except (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError, ssl.SSLZeroReturnError):
                closed = True
                break
        print(f"closed after {time.monotonic() - started:.2f}s of trickled headers")
        assert closed


def test_idle_keep_alive_connection_is_closed(short_timeouts):
    with connect(short_timeouts.port, short_timeouts.ca_file) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        assert read_ok(conn).startswith(b"HTTP/1.1 200 OK\r\n")
        time.sleep(0.5)  # within the idle timeout, the next request starts a fresh header deadline
        conn.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.7)
        conn.sendall(b"Host: a\r\n\r\n")
        assert read_ok(conn).startswith(b"HTTP/1.1 200 OK\r\n")
        print(f"idle connection closed after {closed_after(conn):.2f}s")


def test_timeouts_are_read_from_the_serving_info():
    info = SecureServingInfo(
        "127.0.0.1", 0, "", "", max_header_bytes=10, read_header_timeout=2, idle_timeout=3
    )
    limits = info.connection_limits()
    assert (limits.max_header_bytes, limits.read_header_timeout, limits.idle_timeout) == (10, 2, 3)
