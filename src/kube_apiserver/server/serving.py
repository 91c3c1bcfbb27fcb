"""Secure serving: HTTPS on uvicorn (httptools parser, uvloop), chosen by measurement
(docs/http-server.md). uvicorn runs inside our event loop; we own signals and shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass

import uvicorn

from ..endpoints.http import Handler
from . import httpprotocol, listener
from .asgi import ASGIApp
from .dynamiccerts import ServingCertificates, SNICertKey, TLSOptions
from .handoff import ConnectionReceiver
from .httpprotocol import ConnectionLimits, HardenedHTTPProtocol, TLSScopeHTTPProtocol

log = logging.getLogger("kube_apiserver.server")
GRACEFUL_SHUTDOWN_SECONDS = 60
DEFAULT_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"  # the AEAD ones of the ECDHE suites Go enables by default


@dataclass
class SecureServingInfo:
    host: str
    port: int
    cert_file: str
    key_file: str
    min_tls_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2  # --tls-min-version
    cipher_suites: str = ""  # --tls-cipher-suites as OpenSSL names; "" is DEFAULT_CIPHERS
    client_ca_file: str = ""  # when set, clients may present certificates signed by it
    requestheader_client_ca_file: str = ""  # and the front proxy, certificates signed by this one
    sni_cert_keys: tuple[SNICertKey, ...] = ()  # --tls-sni-cert-key
    # Go's http.Server limits as kube-apiserver sets them (secure_serving.go); tests shorten the timeouts.
    max_header_bytes: int = httpprotocol.MAX_HEADER_BYTES
    read_header_timeout: float = httpprotocol.READ_HEADER_TIMEOUT
    idle_timeout: float = httpprotocol.IDLE_TIMEOUT
    # --permit-port-sharing: replicas on one machine listen on one address; the kernel spreads connections
    reuse_port: bool = False
    # a worker of --workers: connections come from the dispatcher over this socket (server/handoff.py)
    handoff: socket.socket | None = None

    def connection_limits(self) -> ConnectionLimits:
        return ConnectionLimits(self.max_header_bytes, self.read_header_timeout, self.idle_timeout)

    def listen(self) -> socket.socket:
        sock = listener.bind(self.host, self.port, self.reuse_port)
        sock.listen(2048)
        sock.setblocking(False)
        return sock


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, handoff: socket.socket | None = None):
        super().__init__(config)
        self.listening = asyncio.Event()  # set once startup is done: serve() waits for it, not polls
        self.receiver = ConnectionReceiver(handoff, self._serve_connection) if handoff is not None else None
        if self.receiver is not None:  # the dispatcher hears of each connection's end
            self.server_state.connections = self.receiver.connections

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The command handles SIGTERM/SIGINT itself (readyz first, then drain).
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.receiver is not None:
            self.receiver.start()
        self.listening.set()

    def _serve_connection(self, sock: socket.socket) -> None:
        asyncio.get_running_loop().create_task(self._connection(sock))

    async def _connection(self, sock: socket.socket) -> None:
        """A handed connection, served as the listener's own (its TLS handshake first). Once handed to the
        loop, the transport owns the socket: a failed handshake closes it there."""
        config = self.config

        def protocol() -> asyncio.Protocol:
            return config.http_protocol_class(config=config, server_state=self.server_state,  # type: ignore[call-arg]
                                              app_state=self.lifespan.state)

        try:
            with contextlib.suppress(OSError, ssl.SSLError, TimeoutError, ConnectionError):
                await asyncio.get_running_loop().connect_accepted_socket(protocol, sock, ssl=config.ssl)
        finally:
            assert self.receiver is not None
            self.receiver.settled()

    async def main_loop(self) -> None:
        """uvicorn's loop (on_tick every 0.1 s: the Date header, the exit flags), woken by request_exit() so a
        stop does not wait up to a tick for the next look at should_exit."""
        self.exit_requested = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.exit_requested.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown pauses 0.1 s for the open connections to finish; with none open (and so no request
        task) there is nothing to wait for: stop listening and return."""
        if self.receiver is not None:
            self.receiver.close()
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets=sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        await self.lifespan.shutdown()

    def request_exit(self, force: bool = False) -> None:
        self.should_exit = True
        self.force_exit = self.force_exit or force
        exit_requested = getattr(self, "exit_requested", None)
        if exit_requested is not None:
            exit_requested.set()


@dataclass
class HTTPServer:
    server: _Server
    task: asyncio.Task[None]
    port: int
    app: ASGIApp
    certificates: ServingCertificates

    async def shutdown(self) -> None:
        """Stop accepting, let in-flight requests finish, then close every connection: an idle client
        that never reads its EOF must not hold the process (TLS close waits for the peer otherwise)."""
        self.server.request_exit()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GRACEFUL_SHUTDOWN_SECONDS
        while self.app.inflight and loop.time() < deadline:
            await asyncio.sleep(0.05)
        if self.server.server_state.connections:  # the last responses leave their buffers (none without a client)
            await asyncio.sleep(0.1)
        self.server.request_exit(force=True)
        for connection in list(self.server.server_state.connections):
            connection.transport.abort()
        await self.task
        await self.certificates.stop()


def _load_tls(config: uvicorn.Config, info: SecureServingInfo) -> None:
    """Builds the SSL context now (uvicorn's load) to set what uvicorn has no option for, the minimum TLS
    version; a cipher list this OpenSSL has none of is a one-line error, not a traceback."""
    if info.cipher_suites:
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).set_ciphers(info.cipher_suites)
        except ssl.SSLError:
            raise OSError(f"none of the cipher suites of --tls-cipher-suites ({info.cipher_suites}) is "
                          f"available in {ssl.OPENSSL_VERSION}") from None
    config.load()
    config.ssl.minimum_version = info.min_tls_version


async def serve(handler: Handler, info: SecureServingInfo) -> HTTPServer:
    sockets = [info.listen()] if info.handoff is None else []
    port = sockets[0].getsockname()[1] if sockets else info.port
    app = ASGIApp(handler)
    # proxy_headers=False: the client address is the peer's, as Go's http.Request.RemoteAddr (uvicorn would
    # otherwise take X-Forwarded-For from loopback clients, and run a middleware on every request for it).
    # ws="none": upgrades are answered as plain HTTP requests, as they are when neither websockets nor
    # wsproto is installed (neither is a dependency); "auto" would import whichever is (~0.1 s).
    # The protocol is uvicorn's httptools one with Go's connection limits (httpprotocol.py); its idle timeout
    # replaces uvicorn's timeout_keep_alive.
    client_cas = [path for path in (info.client_ca_file, info.requestheader_client_ca_file) if path]
    protocol = TLSScopeHTTPProtocol if client_cas else HardenedHTTPProtocol
    http_protocol = functools.partial(protocol, limits=info.connection_limits())
    config = uvicorn.Config(app, http=http_protocol, ws="none", lifespan="off", log_config=None,  # type: ignore[arg-type]
                            access_log=False, ssl_certfile=info.cert_file, ssl_keyfile=info.key_file,
                            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS, server_header=False,
                            date_header=True, proxy_headers=False)
    if client_cas:
        config.ssl_ca_certs = client_cas[0]
        config.ssl_cert_reqs = ssl.CERT_OPTIONAL
    config.ssl_ciphers = info.cipher_suites or DEFAULT_CIPHERS
    config.ssl_version = ssl.PROTOCOL_TLS_SERVER
    _load_tls(config, info)
    # TLS trusts both client CAs (each authenticator checks its own CA issued the certificate); every file is
    # read again when it changes.
    certificates = ServingCertificates(TLSOptions(
        info.cert_file, info.key_file, info.sni_cert_keys, tuple(client_cas), info.min_tls_version,
        info.cipher_suites or DEFAULT_CIPHERS))
    config.ssl = certificates.listener
    certificates.start()
    server = _Server(config, info.handoff)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=sockets))
    listening = asyncio.ensure_future(server.listening.wait())
    await asyncio.wait({task, listening}, return_when=asyncio.FIRST_COMPLETED)
    if not listening.done():
        listening.cancel()
        task.result()  # why it did not start
        raise RuntimeError("the HTTP server stopped before it started")
    return HTTPServer(server, task, port, app, certificates)
