#!/usr/bin/env python3
"""Benchmark candidate HTTP servers for the kube_apiserver ASGI boundary.

For each candidate this starts ONE server process (this file, ``--serve NAME``) that runs the server
embedded in an already running uvloop event loop, serving ``GET /api/v1/namespaces/default`` (a ~400-byte
JSON body), ``GET /stream`` (3 chunks, 200 ms apart) and ``GET /watch`` (20 s of chunks) over TLS on
127.0.0.1. The parent checks the server (status, body, keep-alive, ALPN, chunks arriving as sent), drives it
with ``wrk -t1 -c16 -dNs`` over https keep-alive, reads the server's CPU time from /proc (CPU us/request),
opens a /watch and stops the server gracefully (stdin EOF) while the watch is open, then prints a table.

    python bench/http_servers.py            # 2 rounds x 5 s over TLS; then plain HTTP for the 2 fastest and
                                            # HTTP/2 (h2load -m1, if installed) for those offering h2 (ALPN)
    python bench/http_servers.py --only uvicorn-httptools,custom-raw --rounds 1 --duration 3

Candidates whose packages are missing are skipped. Only 127.0.0.1 is used. Needs wrk (Debian: wrk);
h2load (Debian: nghttp2-client) is optional.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import http.client
import importlib.util
import ipaddress
import json
import os
import re
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

HOST = "127.0.0.1"
GET_PATH = "/api/v1/namespaces/default"
STREAM_PATH = "/stream"  # 3 chunks: checks that chunks are flushed as they are sent
WATCH_PATH = "/watch"  # 20 s of chunks: held open while the server is asked to stop
STREAMS = {STREAM_PATH: 3, WATCH_PATH: 100}
STREAM_GAP_S = 0.2
GRACE_S = 1  # graceful-shutdown deadline given to servers that support one
JSON_CT = "application/json"

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _namespace_body() -> bytes:
    obj = {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {
            "name": "default",
            "uid": "6c8e0b7e-2f4b-4c1e-9a57-3f0d2b9e8a11",
            "resourceVersion": "193",
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"kubernetes.io/metadata.name": "default"},
            "managedFields": [
                {
                    "manager": "kube-apiserver",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2024-05-01T10:00:00Z",
                    "fieldsType": "FieldsV1",
                }
            ],
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    return json.dumps(obj, separators=(",", ":")).encode()


BODY = _namespace_body()
STREAM_CHUNK = b'{"type":"ADDED","object":' + BODY + b"}\n"


# ---------------------------------------------------------------------------------------------------------
# The apps (same behaviour for every interface)
# ---------------------------------------------------------------------------------------------------------


async def chunks(n: int) -> AsyncIterator[tuple[bytes, bool]]:
    """n watch-event-like chunks, STREAM_GAP_S apart; yields (chunk, more_follow)."""
    for i in range(n):
        yield STREAM_CHUNK, i < n - 1
        if i < n - 1:
            await asyncio.sleep(STREAM_GAP_S)


async def asgi_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The minimal ASGI app that every ASGI server runs."""
    if scope["type"] == "lifespan":
        await _asgi_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    if scope["path"] == GET_PATH:
        headers = [(b"content-type", JSON_CT.encode()), (b"content-length", str(len(BODY)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": BODY})
    elif scope["path"] in STREAMS:
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", JSON_CT.encode())]}
        )
        async for chunk, more in chunks(STREAMS[scope["path"]]):
            await send({"type": "http.response.body", "body": chunk, "more_body": more})
    else:
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


async def _asgi_lifespan(receive: Receive, send: Send) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif msg["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def rsgi_app(scope: Any, proto: Any) -> None:
    """The same app on granian's RSGI interface."""
    headers = [("content-type", JSON_CT)]
    if scope.path == GET_PATH:
        proto.response_bytes(200, headers, BODY)
    elif scope.path in STREAMS:
        transport = proto.response_stream(200, headers)
        async for chunk, _ in chunks(STREAMS[scope.path]):
            await transport.send_bytes(chunk)
    else:
        proto.response_bytes(404, [], b"")


# ---------------------------------------------------------------------------------------------------------
# Server side: each candidate embedded in a running (uv)loop, stopped gracefully when `stop` is set
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TLSFiles:
    cert: Path
    key: Path

    def context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx


async def serve_uvicorn(http: str, port: int, tls: TLSFiles | None, stop: asyncio.Event) -> None:
    import uvicorn

    config = uvicorn.Config(
        asgi_app, host=HOST, port=port, http=http, loop="none", lifespan="off", access_log=False,
        log_level="warning", ssl_certfile=tls and str(tls.cert), ssl_keyfile=tls and str(tls.key),
        timeout_graceful_shutdown=GRACE_S, http2=http == "zttp",
    )  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await stop.wait()
    server.should_exit = True
    await task


async def serve_hypercorn(port: int, tls: TLSFiles | None, stop: asyncio.Event) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"{HOST}:{port}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    config.graceful_timeout = GRACE_S
    if tls:
        config.certfile, config.keyfile = str(tls.cert), str(tls.key)
    await serve(asgi_app, config, shutdown_trigger=stop.wait, mode="asgi")  # type: ignore[arg-type]


async def serve_granian(interface: str, port: int, tls: TLSFiles | None, stop: asyncio.Event) -> None:
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server.embed import Server

    server = Server(
        rsgi_app if interface == "rsgi" else asgi_app, address=HOST, port=port, interface=Interfaces(interface),
        log_level=LogLevels.warning, ssl_cert=tls and tls.cert, ssl_key=tls and tls.key,
    )  # fmt: skip
    server.workers_kill_timeout = GRACE_S  # not an embed.Server argument; without it stop() waits for watches
    task = asyncio.create_task(server.serve())
    await stop.wait()
    server.stop()
    # embed's stop raises TimeoutError (instead of killing quietly) once workers_kill_timeout expires
    with contextlib.suppress(TimeoutError):
        await task


async def serve_aiohttp(port: int, tls: TLSFiles | None, stop: asyncio.Event) -> None:
    from aiohttp import web

    async def get(_: web.Request) -> web.Response:
        return web.Response(body=BODY, content_type=JSON_CT)

    async def stream(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": JSON_CT})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        async for chunk, _ in chunks(STREAMS[request.path]):
            await resp.write(chunk)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get(GET_PATH, get)
    app.router.add_get(STREAM_PATH, stream)
    app.router.add_get(WATCH_PATH, stream)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=GRACE_S)
    await runner.setup()
    await web.TCPSite(runner, HOST, port, ssl_context=tls and tls.context()).start()
    await stop.wait()
    await runner.cleanup()


RAW_OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(BODY) + BODY
RAW_404 = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"


class RawProtocol(asyncio.Protocol):
    """Hand-written HTTP/1.1 on httptools: answers from pre-built bytes (the ceiling)."""

    def __init__(self, conns: set[asyncio.Transport]) -> None:
        import httptools

        self.parser = httptools.HttpRequestParser(self)
        self.error = httptools.HttpParserError
        self.conns = conns
        self.url = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's SSL transport is not a subclass
        self.conns.add(self.transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport:
            self.conns.discard(self.transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except self.error:
            assert self.transport
            self.transport.close()

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_message_complete(self) -> None:
        url, self.url = self.url, b""
        self.respond(url.split(b"?", 1)[0].decode("latin-1"), self.parser.should_keep_alive())

    def respond(self, path: str, keep_alive: bool) -> None:
        assert self.transport
        if path in STREAMS:
            asyncio.get_running_loop().create_task(self.stream(STREAMS[path], keep_alive))
            return
        self.transport.write(RAW_OK if path == GET_PATH else RAW_404)
        if not keep_alive:
            self.transport.close()

    async def stream(self, n: int, keep_alive: bool) -> None:
        assert self.transport
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        async for chunk, _ in chunks(n):
            if self.transport.is_closing():
                return
            self.transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.transport.write(b"0\r\n\r\n")
        if not keep_alive:
            self.transport.close()


class AsgiProtocol(RawProtocol):
    """The same parser, but every request goes through the ASGI app (a minimal custom ASGI adapter)."""

    def respond(self, path: str, keep_alive: bool) -> None:
        exchange = AsgiExchange(self, keep_alive)
        asyncio.get_running_loop().create_task(exchange.run(path))


class AsgiExchange:
    """One request/response on an AsgiProtocol: GET-only, no request body, no back-pressure."""

    def __init__(self, proto: RawProtocol, keep_alive: bool) -> None:
        assert proto.transport
        self.transport = proto.transport
        self.keep_alive = keep_alive
        self.head = b""
        self.chunked = True

    async def run(self, path: str) -> None:
        scope = {"type": "http", "http_version": "1.1", "method": "GET", "path": path, "headers": []}
        await asgi_app(scope, self.receive, self.send)
        if not self.keep_alive:
            self.transport.close()

    async def receive(self) -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(self, msg: Message) -> None:
        if msg["type"] == "http.response.start":
            self.start(msg["status"], msg.get("headers", []))
        elif msg["type"] == "http.response.body":
            self.body(msg.get("body", b""), msg.get("more_body", False))

    def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        lines = [b"HTTP/1.1 %d %s" % (status, b"OK" if status == 200 else b"Error")]
        lines += [k + b": " + v for k, v in headers]
        self.chunked = not any(k.lower() == b"content-length" for k, _ in headers)
        if self.chunked:
            lines.append(b"transfer-encoding: chunked")
        self.head = b"\r\n".join(lines) + b"\r\n\r\n"

    def body(self, data: bytes, more: bool) -> None:
        out, self.head = self.head, b""
        if self.chunked:
            out += (b"%x\r\n%s\r\n" % (len(data), data) if data else b"") + (b"" if more else b"0\r\n\r\n")
        else:
            out += data
        self.transport.write(out)


async def serve_custom(
    proto: type[RawProtocol], port: int, tls: TLSFiles | None, stop: asyncio.Event
) -> None:
    conns: set[asyncio.Transport] = set()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: proto(conns), HOST, port, ssl=tls and tls.context(), backlog=1024
    )
    await stop.wait()
    server.close()
    for transport in list(conns):
        transport.close()
    await server.wait_closed()


Starter = Callable[[int, TLSFiles | None, asyncio.Event], Awaitable[None]]


@dataclass(frozen=True)
class Candidate:
    name: str
    modules: tuple[str, ...]
    start: Starter


def _partial(fn: Callable[..., Awaitable[None]], first: Any) -> Starter:
    async def starter(port: int, tls: TLSFiles | None, stop: asyncio.Event) -> None:
        await fn(first, port, tls, stop)

    return starter


CANDIDATES: tuple[Candidate, ...] = (
    Candidate("uvicorn-httptools", ("uvicorn", "httptools"), _partial(serve_uvicorn, "httptools")),
    Candidate("uvicorn-zttp", ("uvicorn", "zttp"), _partial(serve_uvicorn, "zttp")),  # HTTP/1.1 + HTTP/2
    Candidate("uvicorn-h11", ("uvicorn", "h11"), _partial(serve_uvicorn, "h11")),
    Candidate("hypercorn", ("hypercorn",), serve_hypercorn),  # h11 + h2
    Candidate("granian-asgi", ("granian",), _partial(serve_granian, "asginl")),  # granian.server.embed
    Candidate("granian-rsgi", ("granian",), _partial(serve_granian, "rsgi")),
    Candidate("aiohttp", ("aiohttp",), serve_aiohttp),  # its own handler interface, not ASGI
    Candidate("custom-raw", ("httptools",), _partial(serve_custom, RawProtocol)),  # no ASGI: the ceiling
    Candidate("custom-asgi", ("httptools",), _partial(serve_custom, AsgiProtocol)),  # minimal ASGI adapter
)
BY_NAME = {c.name: c for c in CANDIDATES}


async def _child_main(name: str, port: int, tls: TLSFiles | None) -> None:
    stop = asyncio.Event()
    server = asyncio.create_task(BY_NAME[name].start(port, tls, stop))
    eof = asyncio.create_task(asyncio.to_thread(sys.stdin.buffer.read))  # parent closes stdin to stop us
    await asyncio.wait({server, eof}, return_when=asyncio.FIRST_COMPLETED)
    stop.set()
    await server


def run_child(name: str, port: int, certdir: str | None) -> None:
    tls = TLSFiles(Path(certdir) / "cert.pem", Path(certdir) / "key.pem") if certdir else None
    try:
        import uvloop
    except ImportError:
        asyncio.run(_child_main(name, port, tls))
    else:
        uvloop.run(_child_main(name, port, tls))


# ---------------------------------------------------------------------------------------------------------
# Parent side: cert, process control, probes, wrk, table
# ---------------------------------------------------------------------------------------------------------


def write_self_signed(directory: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(HOST)), x509.DNSName("localhost")])
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1)).add_extension(san, critical=False)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (directory / "key.pem").write_bytes(pem)


@dataclass
class Result:
    name: str
    scheme: str
    round: int
    rps: float = 0.0
    requests: int = 0
    p50_ms: float | None = None
    p99_ms: float | None = None
    errors: str = ""
    cpu_us_per_req: float | None = None
    alpn: str = "-"
    keep_alive: bool | None = None
    stream_first_ms: float | None = None
    stream_total_ms: float | None = None
    stop_s: float | None = None
    exit_code: int | None = None
    note: str = ""


def missing_modules(candidate: Candidate) -> list[str]:
    return [m for m in candidate.modules if importlib.util.find_spec(m) is None]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def start_server(name: str, port: int, certdir: Path | None, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, os.path.abspath(__file__), "--serve", name, "--port", str(port)]
    if certdir:
        cmd += ["--certdir", str(certdir)]
    with log.open("wb") as err:
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)


def wait_listening(proc: subprocess.Popen[bytes], port: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return True
        time.sleep(0.05)
    return False


def stop_server(proc: subprocess.Popen[bytes], grace: float = 8.0) -> tuple[float | None, int | None]:
    """Close stdin (graceful stop); kill if it does not exit within `grace`. Returns (seconds, rc)."""
    t0 = time.monotonic()
    with contextlib.suppress(OSError):
        assert proc.stdin
        proc.stdin.close()
    try:
        rc = proc.wait(timeout=grace)
        return time.monotonic() - t0, rc
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None, None


def cpu_seconds(pid: int) -> float:
    """utime+stime of a process (all threads) from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _client_ctx(alpn: list[str]) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(alpn)
    return ctx


def _conn(port: int, tls: bool) -> http.client.HTTPConnection:
    if tls:
        return http.client.HTTPSConnection(HOST, port, timeout=5, context=_client_ctx(["http/1.1"]))
    return http.client.HTTPConnection(HOST, port, timeout=5)


def probe_get(port: int, tls: bool, res: Result) -> bool:
    """Two GETs on one connection: checks status, type, body and whether the connection was kept."""
    conn = _conn(port, tls)
    try:
        socks = []
        for _ in range(2):
            conn.request("GET", GET_PATH)
            resp = conn.getresponse()
            body = resp.read()
            socks.append(conn.sock)
            if (
                resp.status != 200
                or body != BODY
                or not resp.getheader("content-type", "").startswith(JSON_CT)
            ):
                res.note = f"bad GET: {resp.status} {resp.getheader('content-type')} {len(body)}B"
                return False
        res.keep_alive = socks[0] is socks[1]
        return True
    finally:
        conn.close()


def probe_stream(port: int, tls: bool, res: Result) -> None:
    conn = _conn(port, tls)
    try:
        t0 = time.perf_counter()
        conn.request("GET", STREAM_PATH)
        resp = conn.getresponse()
        first = resp.read1()
        res.stream_first_ms = (time.perf_counter() - t0) * 1e3
        rest = resp.read()
        res.stream_total_ms = (time.perf_counter() - t0) * 1e3
        if first + rest != STREAM_CHUNK * STREAMS[STREAM_PATH]:
            res.note = "bad stream body"
    finally:
        conn.close()


def open_watch(port: int, tls: bool) -> threading.Thread:
    """A long-lived chunked GET, read until the server ends it, left open while the server is stopped."""
    conn = _conn(port, tls)
    conn.request("GET", WATCH_PATH)
    resp = conn.getresponse()
    resp.read1()

    def drain() -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):
            resp.read()
        conn.close()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    return reader


def probe_alpn(port: int) -> str:
    with socket.create_connection((HOST, port), timeout=5) as raw:
        with _client_ctx(["h2", "http/1.1"]).wrap_socket(raw) as sock:
            return sock.selected_alpn_protocol() or "none"


_UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_wrk(out: str, res: Result) -> None:
    if m := re.search(r"Requests/sec:\s+([\d.]+)", out):
        res.rps = float(m.group(1))
    if m := re.search(r"(\d+) requests in", out):
        res.requests = int(m.group(1))
    for pct, attr in (("50", "p50_ms"), ("99", "p99_ms")):
        if m := re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M):
            setattr(res, attr, float(m.group(1)) * _UNIT_MS[m.group(2)])
    errs = re.findall(r"(Non-2xx or 3xx responses: \d+|Socket errors: [^\n]+)", out)
    res.errors = "; ".join(errs)


def parse_h2load(out: str, res: Result) -> None:
    if m := re.search(r"finished in [\d.]+s, ([\d.]+) req/s", out):
        res.rps = float(m.group(1))
    if m := re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed", out):
        res.requests = int(m.group(1))
        res.errors = f"{m.group(2)} failed" if m.group(2) != "0" else ""
    if m := re.search(r"time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)", out):
        res.note = f"mean {float(m.group(1)) * _UNIT_MS[m.group(2)]:.2f} ms"
    if "Application protocol: h2" not in out:
        res.errors += " not h2"


def load_command(scheme: str, port: int, args: argparse.Namespace) -> list[str]:
    url = f"{'http' if scheme == 'http' else 'https'}://{HOST}:{port}{GET_PATH}"
    if scheme == "h2":  # one stream at a time per connection, like wrk's keep-alive connections
        return ["h2load", f"-t{args.threads}", f"-c{args.connections}", "-m1", f"-D{args.duration}", url]
    return ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s", "--latency", url]


def run_load(scheme: str, port: int, args: argparse.Namespace, res: Result, pid: int) -> None:
    """Drive the server for args.duration seconds; server CPU time / requests = cost per request."""
    cpu0 = cpu_seconds(pid)
    cmd = load_command(scheme, port, args)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 20).stdout
    cpu1 = cpu_seconds(pid)
    (parse_h2load if scheme == "h2" else parse_wrk)(out, res)
    if res.requests:
        res.cpu_us_per_req = (cpu1 - cpu0) / res.requests * 1e6


def measure(name: str, scheme: str, rnd: int, args: argparse.Namespace, tmpdir: Path) -> Result:
    res = Result(name, scheme, rnd)
    tls = scheme != "http"
    port = free_port()
    log = tmpdir / f"{name}-{scheme}-{rnd}.log"
    proc = start_server(name, port, tmpdir if tls else None, log)
    watch: threading.Thread | None = None
    try:
        if not wait_listening(proc, port):
            res.note = "did not start: " + log.read_text(errors="replace").strip()[-300:]
            return res
        if probe_get(port, tls, res):
            probe_stream(port, tls, res)
            res.alpn = probe_alpn(port) if tls else "-"
            run_load(scheme, port, args, res, proc.pid)
            watch = open_watch(port, tls)
    except (OSError, http.client.HTTPException, subprocess.SubprocessError, ssl.SSLError) as exc:
        res.note = f"{type(exc).__name__}: {exc}"
    finally:
        res.stop_s, res.exit_code = stop_server(proc)
        if watch:
            watch.join(timeout=5)
        if res.stop_s is None and args.verbose:
            print(log.read_text(errors="replace")[-2000:])
    return res


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _median(values: list[float | None], spec: str) -> str:
    present = [v for v in values if v is not None]
    return _fmt(statistics.median(present) if present else None, spec)


def _row(name: str, runs: list[Result], best: float) -> list[str]:
    rps = [r.rps for r in runs]
    mean = statistics.fmean(rps)
    last = runs[-1]
    stream = f"{_fmt(last.stream_first_ms, '.0f')}/{_fmt(last.stream_total_ms, '.0f')}"
    stops = [r.stop_s for r in runs if r.stop_s is not None]
    return [
        name, runs[0].scheme, *[f"{x:.0f}" for x in rps], f"{mean:.0f}", f"{mean / best:.2f}x" if best else "-",
        _median([r.p50_ms for r in runs], ".2f"), _median([r.p99_ms for r in runs], ".2f"),
        "/".join(_fmt(r.cpu_us_per_req, ".0f") for r in runs),
        last.alpn, {True: "yes", False: "NO", None: "-"}[last.keep_alive], stream,
        _fmt(max(stops), ".2f") if len(stops) == len(runs) else "KILLED",
        "; ".join(dict.fromkeys(r.errors or r.note for r in runs if r.errors or r.note))[:90],
    ]  # fmt: skip


def print_table(results: list[Result], rounds: int) -> None:
    head = ["candidate", "scheme", *[f"r{i + 1} req/s" for i in range(rounds)], "mean", "x best",
            "p50 ms", "p99 ms", "CPU us/req (per round)", "ALPN", "keepalive", "stream 1st/all ms", "stop s", "notes"]  # fmt: skip
    rows = []
    for scheme in ("https", "http", "h2"):
        groups: dict[str, list[Result]] = {}
        for r in results:
            if r.scheme == scheme and r.rps:
                groups.setdefault(r.name, []).append(r)
        best = max((statistics.fmean(r.rps for r in g) for g in groups.values()), default=0.0)
        ordered = sorted(groups.items(), key=lambda kv: -statistics.fmean(r.rps for r in kv[1]))
        rows += [_row(name, runs, best) for name, runs in ordered if len(runs) == rounds]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    for line in [head, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=False)).rstrip())
    for r in results:
        if not r.rps:
            print(f"FAILED {r.name} {r.scheme} round {r.round}: {r.note}")


def _print_result(r: Result) -> None:
    print(
        f"  round {r.round} {r.scheme:5} {r.name:18} {r.rps:9.0f} req/s  p50 {_fmt(r.p50_ms, '.2f')} ms  "
        f"p99 {_fmt(r.p99_ms, '.2f')} ms  cpu {_fmt(r.cpu_us_per_req, '.0f')} us/req  "
        f"stop {_fmt(r.stop_s, '.2f')}s rc={r.exit_code} {r.errors} {r.note}",
        flush=True,
    )


def run_rounds(names: list[str], scheme: str, args: argparse.Namespace, tmpdir: Path) -> list[Result]:
    results = []
    for rnd in range(1, args.rounds + 1):  # interleave rounds so background noise spreads over candidates
        for name in names if rnd % 2 else names[::-1]:  # and alternate the order (the first run tends to lag)
            results.append(measure(name, scheme, rnd, args, tmpdir))
            _print_result(results[-1])
    return results


def top_names(results: list[Result], n: int) -> list[str]:
    means: dict[str, list[float]] = {}
    for r in results:
        means.setdefault(r.name, []).append(r.rps)
    return sorted(means, key=lambda k: -statistics.fmean(means[k]))[:n]


def select(args: argparse.Namespace) -> list[str]:
    names = args.only.split(",") if args.only else [c.name for c in CANDIDATES]
    chosen = []
    for name in names:
        if name not in BY_NAME:
            print(f"SKIP {name}: unknown candidate")
            continue
        missing = missing_modules(BY_NAME[name])
        if missing:
            print(f"SKIP {name}: missing {', '.join(missing)}")
        else:
            chosen.append(name)
    return chosen


def run_parent(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        sys.exit("wrk not found (apt-get install -y wrk)")
    names = select(args)
    with tempfile.TemporaryDirectory(prefix="http-bench-") as tmp:
        tmpdir = Path(tmp)
        write_self_signed(tmpdir)
        print(
            f"body {len(BODY)} bytes; wrk -t{args.threads} -c{args.connections} -d{args.duration}s --latency"
        )
        results = run_rounds(names, "https", args, tmpdir)
        if args.plain_top:
            results += run_rounds(top_names(results, args.plain_top), "http", args, tmpdir)
        h2_names = sorted({r.name for r in results if r.alpn == "h2"}, key=names.index)
        if args.h2 and h2_names and shutil.which("h2load"):
            results += run_rounds(h2_names, "h2", args, tmpdir)
        elif args.h2 and h2_names:
            print("h2load not found (apt-get install -y nghttp2-client): HTTP/2 not measured")
    print()
    print_table(results, args.rounds)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated candidates: " + ",".join(BY_NAME))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--duration", type=int, default=5, help="seconds per load run")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--plain-top", type=int, default=2, help="also measure plain HTTP for the N fastest")
    p.add_argument("--no-h2", dest="h2", action="store_false", help="skip the HTTP/2 (h2load) pass")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="print the server log when it had to be killed"
    )
    p.add_argument("--serve", choices=list(BY_NAME), help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--certdir", help=argparse.SUPPRESS)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    if args.serve:
        run_child(args.serve, args.port, args.certdir)
    else:
        run_parent(args)


if __name__ == "__main__":
    main()
