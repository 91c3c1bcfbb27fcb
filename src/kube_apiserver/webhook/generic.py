"""GenericWebhook: a JSON POST to the server of a kubeconfig file (its current context's cluster and user:
CA, client certificate, bearer token), retried with backoff on connection errors, 429 and 5xx answers."""

from __future__ import annotations

import asyncio
import base64
import os
import random
import ssl
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
import yaml

from ..lazyimport import lazy_import

if TYPE_CHECKING:
    import aiohttp
else:
    aiohttp = lazy_import("aiohttp")

Object = dict[str, Any]
REQUEST_TIMEOUT = 30.0  # the webhook's client timeout (DefaultRequestTimeout for webhooks is 30 s)


@dataclass(frozen=True)
class Backoff:
    """wait.Backoff: DefaultRetryBackoff is 500 ms, x1.5, jitter 0.2, 5 steps."""

    duration: float = 0.5
    factor: float = 1.5
    jitter: float = 0.2
    steps: int = 5


class WebhookError(Exception):
    """Why a call failed, as Go's client words it."""


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Target:
    server: str
    context: ssl.SSLContext
    token: str


def load_kubeconfig(path: str) -> Target:
    """The current context's cluster and user (the first of each without one), as clientcmd reads them;
    ConfigError saying what is wrong."""
    try:
        with open(path, "rb") as f:
            config = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"invalid configuration: {err}") from None
    if not isinstance(config, dict):
        raise ConfigError("invalid configuration: not a kubeconfig")
    base = os.path.dirname(os.path.abspath(path))
    cluster, user = _current(config)
    server = cluster.get("server") or ""
    if not server:
        raise ConfigError("invalid configuration: no server found for cluster")
    return Target(server.rstrip("/"), _tls(cluster, user, base), _token(user, base))


def _named(config: Object, kind: str, name: str) -> Object:
    entries = [e for e in config.get(kind) or [] if isinstance(e, dict)]
    for entry in entries:
        if not name or entry.get("name") == name:
            return entry.get(kind[:-1]) or {}
    return {}


def _current(config: Object) -> tuple[Object, Object]:
    context = _named(config, "contexts", config.get("current-context") or "")
    return _named(config, "clusters", context.get("cluster", "")), _named(config, "users", context.get("user", ""))


def _read(entry: Object, key: str, base: str) -> bytes | None:
    """`<key>-data` (base64) or the file `<key>` (relative to the kubeconfig)."""
    data = entry.get(f"{key}-data")
    if data:
        return base64.b64decode(data)
    path = entry.get(key)
    if not path:
        return None
    with open(os.path.join(base, path), "rb") as f:
        return f.read()


def _tls(cluster: Object, user: Object, base: str) -> ssl.SSLContext:
    try:
        ca = _read(cluster, "certificate-authority", base)
        context = ssl.create_default_context(cadata=ca.decode()) if ca else ssl.create_default_context()
        if cluster.get("insecure-skip-tls-verify"):
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        cert, key = _read(user, "client-certificate", base), _read(user, "client-key", base)
        if cert and key:
            _load_pair(context, cert, key)
    except (OSError, ValueError, ssl.SSLError) as err:
        raise ConfigError(f"invalid configuration: {err}") from None
    return context


def _load_pair(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # ssl loads a key pair from files only: a private temporary directory, removed at once.
    with tempfile.TemporaryDirectory() as directory:
        cert_file, key_file = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
        for path, data in ((cert_file, cert), (key_file, key)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                f.write(data)
        context.load_cert_chain(cert_file, key_file)


def _token(user: Object, base: str) -> str:
    if user.get("token"):
        return str(user["token"])
    path = user.get("tokenFile")
    if path:
        with open(os.path.join(base, path)) as f:
            return f.read().strip()
    return ""


class GenericWebhook:
    def __init__(self, target: Target, backoff: Backoff = Backoff(), timeout: float = REQUEST_TIMEOUT):
        self.target = target
        self.backoff = backoff
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._lifetime: AsyncIterator[None] | None = None

    @classmethod
    def from_file(cls, path: str, backoff: Backoff = Backoff(), timeout: float = REQUEST_TIMEOUT) -> GenericWebhook:
        return cls(load_kubeconfig(path), backoff, timeout)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                                  skip_auto_headers=("User-Agent",))
            self._lifetime = close_with_loop(self._session)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def post(self, body: Object) -> Object:
        """The decoded answer of a 2xx response; WebhookError once the retries are spent."""
        data = orjson.dumps(body)
        delay = self.backoff.duration
        for attempt in range(max(self.backoff.steps, 1)):
            try:
                return await self._post_once(data)
            except _Retriable as err:
                if attempt + 1 >= self.backoff.steps:
                    raise WebhookError(str(err)) from None
            await asyncio.sleep(delay * (1 + random.random() * self.backoff.jitter))
            delay *= self.backoff.factor
        raise WebhookError("no attempt made")

    async def _post_once(self, data: bytes) -> Object:
        url = self.target.server
        headers = {"Content-Type": "application/json", "Accept": "application/json, */*",
                   "User-Agent": "kube-apiserver"}
        if self.target.token:
            headers["Authorization"] = f"Bearer {self.target.token}"
        try:
            async with asyncio.timeout(self.timeout):
                async with self._client().post(url, data=data, headers=headers, ssl=self.target.context) as resp:
                    answer, code = await resp.read(), resp.status
        except TimeoutError:
            raise _Retriable(f'Post "{url}": context deadline exceeded') from None
        except aiohttp.ClientError as err:
            raise _Retriable(f'Post "{url}": {err}') from None
        if code == 429 or code >= 500:
            raise _Retriable(f"the server responded with the status code {code}")
        if not 200 <= code < 300:
            raise WebhookError(f"the server responded with the status code {code} but did not return more "
                               "information")
        try:
            decoded = orjson.loads(answer)
        except orjson.JSONDecodeError as err:
            raise WebhookError(f"unable to decode the webhook's answer: {err}") from None
        if not isinstance(decoded, dict):
            raise WebhookError("unable to decode the webhook's answer: not an object")
        return decoded


class _Retriable(Exception):
    pass


async def _closing(session: aiohttp.ClientSession) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await session.close()


async def _start(lifetime: AsyncIterator[None]) -> None:
    await anext(lifetime)


def close_with_loop(session: aiohttp.ClientSession) -> AsyncIterator[None]:
    """The session is closed when the event loop shuts its async generators down (asyncio.run, uvloop.run):
    the webhooks' callers (authenticators, authorizers, admission plugins) have no stop of their own. The
    caller keeps the returned generator as long as the session."""
    lifetime = _closing(session)
    asyncio.get_running_loop().create_task(_start(lifetime))
    return lifetime
