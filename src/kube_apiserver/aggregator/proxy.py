"""The proxy handler of one APIService (k8s.io/kube-aggregator pkg/apiserver/handler_proxy.go): a local
APIService passes the request down the chain; a remote one sends it to a ready endpoint of its service
over HTTPS, as the authenticated user (request-header identity), and streams the answer back (watch).
Errors are plain text, as Go's http.Error writes them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode

from ..admission.webhook.serviceresolution import ResolveError, ServiceLookup
from ..endpoints.http import Handler, Request, Response, StreamingResponse, text
from ..endpoints.proxy.handler import stream_body
from ..lazyimport import lazy_import
from .apiservice import ca_bundle_pem
from .helpers import is_available, service_of, service_port, spec_of
from .transport import CONNECT_TIMEOUT, HOP_BY_HOP, Transport, auth_proxy_headers, go_error

if TYPE_CHECKING:
    import aiohttp
    import yarl
else:
    aiohttp, yarl = lazy_import("aiohttp"), lazy_import("yarl")  # ~0.2 s: on the first proxied request

log = logging.getLogger("kube_apiserver.aggregator")
Object = dict[str, Any]
DISCOVERY_TIMEOUT = 5.0  # aggregatedDiscoveryTimeout: /apis/<group>/<version> must answer quickly
REDIRECT_REJECTED = "the backend attempted to redirect this request, which is not permitted"
# Never copied from the request: the hop-by-hop ones, and Host (the endpoint's is sent).
_DROP_REQUEST = HOP_BY_HOP | {"host", "content-length"}
_DROP_RESPONSE = HOP_BY_HOP | {"content-length"}


def http_error(status: int, message: str) -> Response:
    """http.Error: the message and a newline, as text/plain."""
    return text(status, message + "\n")


@dataclass(frozen=True)
class HandlingInfo:
    """proxyHandlingInfo: what the handler knows of its APIService since the last update."""

    local: bool
    name: str = ""
    service_namespace: str = ""
    service_name: str = ""
    service_port: int = 443
    available: bool = False
    server_name: str = ""
    ca_pem: str = ""
    insecure: bool = False


def handling_info(obj: Object) -> HandlingInfo:
    service = service_of(obj)
    if service is None:
        return HandlingInfo(local=True)
    spec = spec_of(obj)
    return HandlingInfo(False, obj["metadata"]["name"], service.get("namespace", ""), service.get("name", ""),
                        service_port(service), is_available(obj),
                        f"{service.get('name', '')}.{service.get('namespace', '')}.svc",
                        ca_bundle_pem(spec), bool(spec.get("insecureSkipTLSVerify")))


def _upstream_query(query_string: bytes) -> str:
    """url.Values.Encode(): the parameters again, sorted by key."""
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    return urlencode(sorted(pairs, key=lambda p: p[0]))


def _is_discovery(req: Request) -> bool:
    info = req.info
    return info is not None and not info.is_resource_request and len(req.path.strip("/").split("/")) == 3


class ProxyHandler:
    def __init__(self, local_delegate: Handler, transport: Transport, lookup: ServiceLookup, obj: Object):
        self.local_delegate = local_delegate
        self.transport = transport
        self.lookup = lookup
        self.info = handling_info(obj)

    def update_api_service(self, obj: Object) -> None:
        self.info = handling_info(obj)

    async def __call__(self, req: Request) -> Response:
        info = self.info
        if info.local:
            return await self.local_delegate(req)
        if not info.available:
            return http_error(503, "service unavailable")
        return await self.serve(req)

    async def serve(self, req: Request) -> Response:
        """Forwards to the service whatever its last known availability (discovery fetches do so)."""
        info = self.info
        if info.local:
            return await self.local_delegate(req)
        if req.user is None:
            return http_error(500, "missing user")
        try:
            host, port = await self.lookup.resolve_endpoint(info.service_namespace, info.service_name,
                                                            info.service_port)
        except ResolveError as err:
            log.error("error resolving %s/%s: %s", info.service_namespace, info.service_name, err)
            return http_error(503, "service unavailable")
        return await self._forward(req, info, host, port)

    async def _forward(self, req: Request, info: HandlingInfo, host: str, port: int) -> Response:
        address = f"[{host}]" if ":" in host else host
        query = _upstream_query(req.query_string)
        url = yarl.URL(f"https://{address}:{port}{quote(req.path, safe='/:@!$&()*+,;=-._~')}"
                  + (f"?{query}" if query else ""), encoded=True)
        headers = auth_proxy_headers(((k, v) for k, v in req.headers.items() if k not in _DROP_REQUEST), req.user)
        if req.remote_addr:  # httputil.ReverseProxy appends the client to X-Forwarded-For
            prior = req.headers.get("x-forwarded-for")
            headers["X-Forwarded-For"] = f"{prior}, {req.remote_addr}" if prior else req.remote_addr
        body = await req.body() if req.method not in ("GET", "HEAD") else None
        timeout = aiohttp.ClientTimeout(total=DISCOVERY_TIMEOUT if _is_discovery(req) else None,
                                        sock_connect=CONNECT_TIMEOUT)
        try:
            upstream = await self.transport.session().request(
                req.method, url, headers=headers, data=body, allow_redirects=False, timeout=timeout,
                ssl=self.transport.tls(info.ca_pem, info.insecure), server_hostname=info.server_name or None)
        except (aiohttp.ClientError, TimeoutError, OSError) as err:
            return http_error(503, go_error(err, host, port))
        return await _answer(req, upstream)


async def _answer(req: Request, upstream: aiohttp.ClientResponse) -> Response:
    """The aggregated server's answer: redirects refused, sized bodies whole, anything else streamed."""
    if 300 <= upstream.status <= 399 and upstream.headers.get("Location"):
        upstream.close()
        return Response(502, REDIRECT_REJECTED.encode(), "text/plain; charset=utf-8")
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in upstream.raw_headers
               if k.decode("latin-1").lower() not in _DROP_RESPONSE]
    bodiless = req.method == "HEAD" or upstream.status in (204, 304)
    if bodiless or (upstream.content_length is not None and "chunked" not in
                    upstream.headers.get("Transfer-Encoding", "").lower()):
        try:
            body = b"" if bodiless else await upstream.read()
        except (TimeoutError, aiohttp.ClientError) as err:
            return http_error(503, str(err) or type(err).__name__)
        finally:
            upstream.release()
        return Response(upstream.status, body, "", headers)
    return StreamingResponse(upstream.status, stream_body(upstream), "", headers)

