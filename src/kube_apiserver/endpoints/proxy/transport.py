"""Connections to backends the API server proxies to (moved here from aggregator/transport.py so that the
aggregator and the core connect subresources share them): one pooled aiohttp session, TLS contexts per
trusted CA bundle, and transport errors worded as Go reports them."""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from ...apimachinery.goos import errno_text
from ...lazyimport import lazy_import

if TYPE_CHECKING:
    import aiohttp
else:
    aiohttp = lazy_import("aiohttp")  # ~0.2 s: imported with the first session

# Hop-by-hop headers (RFC 7230 6.1) a proxy never forwards, either way.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                        "te", "trailer", "transfer-encoding", "upgrade"})
CONNECT_TIMEOUT = 30.0  # net.Dialer's timeout in client-go's default transport


class Transport:
    """Connections reused across requests to the same endpoint with the same TLS."""

    def __init__(self, client_cert: tuple[str, str] | None = None) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[tuple[str, bool], ssl.SSLContext] = {}
        self.client_cert = client_cert  # (cert file, key file) presented to every endpoint

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # Bodies pass through untouched (no decompression, no headers the client did not send).
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True), auto_decompress=False,
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"))
        return self._session

    def tls(self, ca_pem: str, insecure: bool) -> ssl.SSLContext:
        """Trusts the caBundle (the system roots without one), or nothing is verified."""
        key = (ca_pem, insecure)
        context = self._contexts.get(key)
        if context is None:
            if insecure:
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            else:
                context = ssl.create_default_context(cadata=ca_pem) if ca_pem else ssl.create_default_context()
            if self.client_cert is not None:
                context.load_cert_chain(*self.client_cert)
            self._contexts[key] = context
        return context

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def go_error(err: BaseException, host: str, port: int) -> str:
    """The text Go's transport gives a failed round trip."""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(err, aiohttp.ClientConnectorCertificateError):
        verify = getattr(err.certificate_error, "verify_message", "") or str(err.certificate_error)
        if "mismatch" in verify:
            return f"tls: failed to verify certificate: x509: certificate is not valid for {host}"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(err, aiohttp.ClientConnectorSSLError):
        return f"remote error: tls: {err.os_error}"
    if isinstance(err, getattr(aiohttp, "ClientConnectorDNSError", ())):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(err, aiohttp.ClientConnectorError):
        # A reset during the TLS handshake is a failed read in Go; the other errors come from connect(2).
        op, syscall = ("read", "read") if isinstance(err.os_error, ConnectionResetError) else ("dial", "connect")
        return f"{op} tcp {address}: {syscall}: {errno_text(err.os_error)}"
    if isinstance(err, aiohttp.ServerDisconnectedError):
        return "EOF"
    if isinstance(err, TimeoutError):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    return str(err) or type(err).__name__

