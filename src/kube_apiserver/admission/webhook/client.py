"""Calling a webhook (k8s.io/apiserver/pkg/util/webhook client.go, and client-go's REST request): a
JSON POST over HTTPS, trusting the webhook's caBundle (the system roots when it has none), reusing
connections, bounded by the webhook's timeout. A service is reached at one of its ready endpoints, as
kube-apiserver does with --enable-aggregator-routing (the name on its certificate stays
<service>.<namespace>.svc). Failures are worded as Go's client reports them."""

from __future__ import annotations

import asyncio
import posixpath
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ...apimachinery import errors
from ...apimachinery.field import go_quote
from ...lazyimport import lazy_import
from ...webhook.generic import close_with_loop
from .serviceresolution import ResolveError, ServiceResolver

if TYPE_CHECKING:
    import aiohttp
else:
    aiohttp = lazy_import("aiohttp")  # ~0.2 s: imported when a webhook is first called

Object = dict[str, Any]
MAX_ERROR_BODY = 2048  # client-go shows at most this much of a non-Status error body


@dataclass(frozen=True)
class ClientConfig:
    """webhookutil.ClientConfig: where a webhook is and whom to trust."""

    url: str | None
    service_namespace: str
    service_name: str
    path: str
    port: int
    ca_bundle: str  # PEM text

    @property
    def server_name(self) -> str:
        return f"{self.service_name}.{self.service_namespace}.svc"

    def display_url(self, timeout: int) -> str:
        """The URL client-go requests: the path cleaned (path.Join), the timeout as a parameter."""
        if self.url is not None:
            scheme, _, rest = self.url.partition("://")
            host, slash, path = rest.partition("/")
            base = f"{scheme.lower()}://{host.partition('#')[0].partition('?')[0]}"
            path = (slash + path).partition("?")[0].partition("#")[0]
        else:
            base, path = f"https://{self.server_name}:{self.port}", self.path
        return f"{base}{posixpath.normpath('/' + path).replace('//', '/')}?timeout={timeout}s"


class CallError(Exception):
    """Why a call failed (the reason after 'failed calling webhook "x": '), and the status it carries."""

    def __init__(self, reason: str, status: errors.StatusError):
        super().__init__(reason)
        self.reason, self.status = reason, status


def generic_server_response(code: int, body: bytes, text: bool) -> errors.StatusError:
    """errors.NewGenericServerResponse for a non-Status error answer."""
    message = body.decode(errors="replace").strip()[:MAX_ERROR_BODY] if text else "unknown"
    known = {400: "the server rejected our request for an unknown reason",
             401: "the server has asked for the client to provide credentials", 403: message,
             404: "the server could not find the requested resource", 409: "the server reported a conflict",
             405: "the server does not allow this method on the requested resource",
             422: "the server rejected our request due to an error in our request",
             429: "the server has received too many requests and has asked us to try again later",
             503: "the server is currently unable to handle the request",
             504: "the server was unable to return a response in the time allotted, but may still be processing "
                  "the request"}
    default = f"an error on the server ({go_quote(message)}) has prevented the request from succeeding" \
        if code >= 500 else f"the server responded with the status code {code} but did not return more information"
    return errors.StatusError(code, "", known.get(code, default), {"causes": [
        {"reason": "UnexpectedServerResponse", "message": message}]})


def _error_answer(code: int, headers: Any, body: bytes) -> CallError:
    """transformResponse: a Status in the body speaks for itself; anything else is described."""
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("status") and decoded.get("status") != "Success":
        status = errors.StatusError(decoded.get("code") or code, decoded.get("reason") or "",
                                    decoded.get("message") or "", decoded.get("details"))
        return CallError(status.message, status)
    content_type = headers.get("Content-Type", "")
    status = generic_server_response(code, body, not content_type or content_type.startswith("text/"))
    return CallError(status.message, status)


def _connect_reason(err: aiohttp.ClientConnectorError, host: str, port: int) -> str:
    if isinstance(err, aiohttp.ClientConnectorCertificateError):
        verify = getattr(err.certificate_error, "verify_message", "") or str(err.certificate_error)
        if "mismatch" in verify:
            return f"tls: failed to verify certificate: x509: certificate is not valid for {host}"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(err, aiohttp.ClientConnectorSSLError):
        return f"remote error: tls: {err.os_error}"
    if isinstance(err.os_error, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    return f"dial tcp {host}:{port}: {err.os_error}"


class WebhookClient:
    """One connection pool for every webhook; TLS contexts cached by caBundle."""

    def __init__(self, resolver: ServiceResolver):
        self.resolver = resolver
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lifetime: AsyncIterator[None] | None = None

    def _ssl(self, ca_bundle: str) -> ssl.SSLContext:
        context = self._contexts.get(ca_bundle)
        if context is None:
            context = ssl.create_default_context(cadata=ca_bundle) if ca_bundle else ssl.create_default_context()
            self._contexts[ca_bundle] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                                  skip_auto_headers=("User-Agent",))
            self._lifetime = close_with_loop(self._session)  # no server hook reaches admission plugins
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _target(self, config: ClientConfig, display: str) -> tuple[str, str | None]:
        """The URL to connect to and the TLS server name to verify (None: the URL's host)."""
        if config.url is not None:
            return display, None
        try:
            host, port = await self.resolver.resolve(config.service_namespace, config.service_name, config.port)
        except ResolveError as err:
            raise CallError(f'Post "{display}": {err}', errors.service_unavailable("error calling webhook")) from None
        address = f"[{host}]" if ":" in host else host
        path_and_query = display.split("://", 1)[1].partition("/")[2]
        return f"https://{address}:{port}/{path_and_query}", config.server_name

    async def post(self, config: ClientConfig, body: bytes, timeout: int) -> Any:
        """The decoded JSON answer of a 2xx response; CallError otherwise."""
        display = config.display_url(timeout)
        try:
            context = self._ssl(config.ca_bundle)
        except (ssl.SSLError, ValueError):
            why = "unable to load root certificates: unable to parse bytes as PEM block"
            raise CallError(f"could not get REST client: {why}", errors.internal_error(why)) from None
        try:
            async with asyncio.timeout(timeout):
                url, server_name = await self._target(config, display)
                return await self._exchange(url, server_name, context, body, display)
        except TimeoutError:
            raise CallError(f'failed to call webhook: Post "{display}": context deadline exceeded',
                            errors.service_unavailable("error calling webhook")) from None
        except CallError as err:
            raise CallError(f"failed to call webhook: {err.reason}", err.status) from None

    async def _exchange(self, url: str, server_name: str | None, context: ssl.SSLContext, body: bytes,
                        display: str) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json, */*",
                   "User-Agent": "kube-apiserver-admission"}
        if server_name is not None:
            headers["Host"] = display.split("://", 1)[1].partition("/")[0].partition("?")[0]
        try:
            async with self._client().post(url, data=body, headers=headers, ssl=context,
                                           server_hostname=server_name) as response:
                data = await response.read()
                code, answer_headers = response.status, response.headers
        except aiohttp.ClientConnectorError as err:
            reason = _connect_reason(err, err.host, err.port)
            unavailable = errors.service_unavailable("error calling webhook")
            raise CallError(f'Post "{display}": {reason}', unavailable) from None
        except aiohttp.ClientError as err:
            raise CallError(f'Post "{display}": {err}', errors.service_unavailable("error calling webhook")) from None
        if not 200 <= code <= 206:
            raise _error_answer(code, answer_headers, data)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as err:
            raise CallError(f"couldn't get version/kind; json parse error: {err}",
                            errors.service_unavailable("error calling webhook")) from None
