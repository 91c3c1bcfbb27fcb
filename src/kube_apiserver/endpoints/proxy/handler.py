"""The handler of the proxy subresources of pods, services and nodes (genericrest.NewUpgradeAwareProxyHandler:
k8s.io/apimachinery/pkg/util/proxy UpgradeAwareHandler with its rewriting, CORS-removing Transport, over
httputil.ReverseProxy). The request goes to the location as it came, with X-Forwarded-For and
X-Forwarded-Uri; the answer comes back streamed, redirects and HTML links rewritten to pass through the
proxy again. A backend that cannot be reached is a 503 Status, as the Transport reports it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

from ...apimachinery import errors
from ...lazyimport import lazy_import
from ..http import Request, Response, StreamingResponse
from .html import rewrite_html_response
from .location import Location, PortError, join_path
from .transport import CONNECT_TIMEOUT, HOP_BY_HOP, Transport, go_error

if TYPE_CHECKING:
    import aiohttp
    import yarl
else:
    aiohttp, yarl = lazy_import("aiohttp"), lazy_import("yarl")  # ~0.2 s: on the first proxied request

log = logging.getLogger("kube_apiserver.proxy")
# What url.URL.EscapedPath leaves unescaped in a path, beside letters, digits and -._~
PATH_SAFE = "$&+,/:;=@"
CORS_HEADERS = frozenset({"access-control-allow-credentials", "access-control-allow-headers",
                          "access-control-allow-methods", "access-control-allow-origin"})
# A proxied request body is forwarded whole; Kubernetes sets no limit, this keeps one far above API bodies.
MAX_BODY = 256 * 1024 * 1024
# Only the TLS contexts are kept across requests: a session belongs to one event loop and one request.
_TLS = Transport()


def escaped_path(path: str) -> str:
    return quote(path, safe=PATH_SAFE)


def _connection_listed(value: str) -> set[str]:
    """The headers a Connection header names: hop-by-hop as well."""
    return {token.strip().lower() for token in value.split(",") if token.strip()}


class Proxy:
    """One proxied request: the location it goes to and the path prefix that reaches it through the proxy."""

    def __init__(self, req: Request, location: Location):
        self.req, self.location = req, location
        # defaultProxyTransport: the request path less the location's path is what clients prepend.
        suffix = location.path
        if req.path.endswith("/") and not suffix.endswith("/"):
            suffix += "/"
        self.prepend = req.path[:-len(suffix)] if suffix and req.path.endswith(suffix) else req.path
        self.path = location.path
        if not self.path.endswith("/") and req.path.endswith("/"):
            self.path += "/"

    def url(self, port: int) -> yarl.URL:
        query = self.req.query_string.decode("latin-1")
        netloc = f"{self.location.bracketed_host}:{port}"
        return yarl.URL(f"{self.location.effective_scheme}://{netloc}{escaped_path(self.path)}"
                   + (f"?{query}" if query else ""), encoded=True)

    def headers(self) -> dict[str, str]:
        """The request's headers less the hop-by-hop ones, its Host kept (ReverseProxy does not rewrite it)."""
        drop = HOP_BY_HOP | _connection_listed(self.req.headers.get("connection", "")) | {"content-length"}
        out = {k: v for k, v in self.req.headers.items() if k not in drop}
        if self.req.remote_addr:
            prior = out.get("x-forwarded-for")
            out["x-forwarded-for"] = f"{prior}, {self.req.remote_addr}" if prior else self.req.remote_addr
        forwarded = join_path(self.prepend, escaped_path(self.path))
        out["x-forwarded-uri"] = forwarded + "/" if self.path.endswith("/") else forwarded
        return out

    def rewrite_url(self, target: str) -> str:
        """Transport.rewriteURL: a link to the backend (or to this server) becomes one through the proxy."""
        parts = urlsplit(target)
        request_host = self.req.headers.get("host", "")
        location = self.location
        backend = f"{location.bracketed_host}:{location.port}" if location.port else location.bracketed_host
        different_host = parts.netloc != "" and parts.netloc not in (backend, request_host)
        if different_host or not parts.path.startswith("/"):
            return target
        scheme, netloc = (parts.scheme, parts.netloc) if parts.netloc == request_host else ("", "")
        path = parts.path
        if not path.startswith(self.prepend):
            path = join_path(self.prepend, path) + ("/" if path.endswith("/") else "")
        return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))

    def response_headers(self, upstream: aiohttp.ClientResponse) -> list[tuple[str, str]]:
        drop = HOP_BY_HOP | _connection_listed(upstream.headers.get("Connection", "")) | CORS_HEADERS | \
            {"content-length"}
        out = []
        for raw_name, raw_value in upstream.raw_headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            if name.lower() in drop:
                continue
            if name.lower() == "location":
                value = self.rewrite_url(value)
            out.append((name, value))
        return out


def redirect_to_slash(req: Request) -> Response:
    """proxyRedirectsforRootPath: a GET or HEAD of the bare proxy path is sent to the path with a slash."""
    query = req.query_string.decode("latin-1")
    return Response(301, b"", "", [("location", req.path + "/" + (f"?{query}" if query else ""))])


async def proxy_request(req: Request, location: Location) -> Response:
    """UpgradeAwareHandler.ServeHTTP for a request that is not an upgrade (those are proxied as plain
    requests: this server does not hijack connections)."""
    proxy = Proxy(req, location)
    if not proxy.path and req.method in ("GET", "HEAD"):
        return redirect_to_slash(req)
    try:
        port = location.dial_port()
    except PortError as err:
        raise errors.service_unavailable(f"error trying to reach service: {err}") from None
    body = await req.body(MAX_BODY)
    transport = Transport()
    # Proxying is IP-based: there is no name to verify a certificate against (CreateProxyTransport).
    tls = _TLS.tls("", True) if location.effective_scheme == "https" else True
    try:
        upstream = await transport.session().request(
            req.method, proxy.url(port), headers=proxy.headers(), data=body or None, allow_redirects=False,
            ssl=tls,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT))
    except (aiohttp.ClientError, TimeoutError, OSError) as err:
        await transport.close()
        raise errors.service_unavailable(
            f"error trying to reach service: {go_error(err, location.host, port)}") from None
    return await _answer(req, proxy, upstream, transport)


async def _answer(req: Request, proxy: Proxy, upstream: aiohttp.ClientResponse, transport: Transport) -> Response:
    """The backend's answer: HTML rewritten, sized bodies whole, anything else streamed as it comes."""
    headers = proxy.response_headers(upstream)
    content_type = upstream.headers.get("Content-Type", "").split(";", 1)[0].strip()
    bodiless = req.method == "HEAD" or upstream.status in (204, 304)
    sized = upstream.content_length is not None and "chunked" not in \
        upstream.headers.get("Transfer-Encoding", "").lower()
    if bodiless or sized or content_type == "text/html":
        try:
            body = b"" if bodiless else await upstream.read()
        except (TimeoutError, aiohttp.ClientError) as err:
            raise errors.service_unavailable(f"error trying to reach service: {err}") from None
        finally:
            upstream.release()
            await transport.close()
        if content_type == "text/html" and not bodiless:
            body = rewrite_html_response(body, headers, proxy.rewrite_url)
        return Response(upstream.status, body, "", headers)
    return StreamingResponse(upstream.status, stream_body(upstream, transport), "", headers)


async def stream_body(upstream: aiohttp.ClientResponse, transport: Transport | None = None,
                      ) -> AsyncIterator[bytes]:
    """Passes each piece on as it arrives; the backend connection (and a transport made for this request
    alone) goes when the client does."""
    try:
        async for chunk in upstream.content.iter_any():
            yield chunk
    except aiohttp.ClientError as err:
        log.info("proxied stream ended: %s", err)
    finally:
        upstream.close()
        if transport is not None:
            await transport.close()
