"""A small etcd v3 gRPC client: unary calls with failover between endpoints, and TLS with client
certificates. Messages are raw bytes (see messages.py): grpcio's generic multi-callables, no stubs."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

import grpc
import grpc.aio

log = logging.getLogger("kube_apiserver.storage.etcd3")

CALL_TIMEOUT = 30.0  # one RPC; a retry after failover gets its own
FAILOVER_WINDOW = 20.0  # how long a call keeps trying other endpoints (an etcd leader election fits)
MAX_MESSAGE = 2**31 - 1  # a list of everything can be large; etcd bounds writes itself

_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE),
    ("grpc.max_send_message_length", MAX_MESSAGE),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", 30000),
    ("grpc.keepalive_timeout_ms", 10000),
]

# Worth trying another endpoint: the member is down or unreachable, or it has no leader right now.
RETRYABLE = (grpc.StatusCode.UNAVAILABLE,)
# A watch is also reopened after an internal error, as clientv3's isHaltErr allows ("failed in middle of send,
# corrupted frame"): a stream cut by a member that died ends with INTERNAL here, not UNAVAILABLE.
WATCH_RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL)


@dataclass(frozen=True)
class TLSConfig:
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""


def _read(path: str) -> bytes | None:
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


def _target(endpoint: str) -> tuple[str, bool]:
    """host:port and whether TLS is used, from `https://host:port`, `http://host:port` or `host:port`."""
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if parts.scheme not in ("http", "https", "unix", "unixs"):
        raise ValueError(f"etcd endpoint {endpoint!r}: unsupported scheme {parts.scheme!r}")
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{parts.port or 2379}", parts.scheme in ("https", "unixs")


class Client:
    """One gRPC channel per endpoint; calls go to the current one and move on when it is unavailable."""

    def __init__(self, endpoints: list[str], tls: TLSConfig | None = None):
        if not endpoints:
            raise ValueError("no etcd endpoints")
        tls = tls or TLSConfig()
        credentials = None
        targets = [_target(e) for e in endpoints]
        if any(secure for _, secure in targets):  # the scheme decides, as etcd's client does
            credentials = grpc.ssl_channel_credentials(
                _read(tls.ca_file), _read(tls.key_file), _read(tls.cert_file)
            )
        self.endpoints = list(endpoints)
        self._channels = [
            grpc.aio.secure_channel(target, credentials, options=_CHANNEL_OPTIONS)
            if secure
            else grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS)
            for target, secure in targets
        ]
        self._current = 0
        # The loop's time calls began failing over (said once), until a call sent after it is answered.
        self._down_since: float | None = None
        # A multi-callable per channel and method: making one per call costs as much as the call.
        self._callables: dict[tuple[int, str], grpc.aio.UnaryUnaryMultiCallable] = {}
        self.failover_window = FAILOVER_WINDOW

    @property
    def channel(self) -> grpc.aio.Channel:
        return self._channels[self._current]

    def failover(self, failed: grpc.aio.Channel) -> None:
        """The next endpoint after `failed` (unless another caller moved on already). An outage is logged once,
        not once per retry of every call and watch (a watch cache per resource retries each its own)."""
        if self._channels[self._current] is not failed:
            return
        down = self.endpoints[self._current]
        self._current = (self._current + 1) % len(self._channels)
        if self._down_since is not None:
            log.debug("etcd: trying endpoint %s", self.endpoints[self._current])
            return
        self._down_since = asyncio.get_running_loop().time()
        if len(self._channels) == 1:
            log.warning("etcd: endpoint %s is unavailable; retrying", down)
        else:
            log.warning("etcd: endpoint %s is unavailable; trying %s", down, self.endpoints[self._current])

    def answered(self, sent: float) -> None:
        """A call or watch stream sent at `sent` (the loop's time) was answered: an outage that began before it
        is over, said once. One sent before the outage began proves nothing: it was on its way as the member
        went (a dying member answers some calls in flight after failing others)."""
        if self._down_since is not None and sent > self._down_since:
            self._down_since = None
            log.info("etcd: endpoint %s answers", self.endpoints[self._current])

    async def unary(self, method: str, request: bytes, retry: bool = True) -> bytes:
        """One call; on an unavailable endpoint the next one is tried (with backoff) for a while."""
        return (await self.unary_write(method, request, retry))[0]

    async def unary_write(self, method: str, request: bytes, retry: bool = True) -> tuple[bytes, bool]:
        """The response, and whether an earlier attempt may have been applied before it failed (a timeout
        or a leader change after the request reached etcd): the caller then checks what it finds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.failover_window
        attempt = 0
        maybe_applied = False
        while True:
            channel = self.channel
            call = self._callables.get((self._current, method))
            if call is None:
                call = self._callables[(self._current, method)] = channel.unary_unary(method)
            sent = loop.time()
            try:
                response = await call(request, timeout=CALL_TIMEOUT)
            except grpc.aio.AioRpcError as err:
                if not retry or err.code() not in RETRYABLE or loop.time() > deadline:
                    raise
                maybe_applied = maybe_applied or not _never_sent(err)
                self.failover(channel)
                attempt += 1
                if attempt % len(self._channels) == 0:  # every endpoint failed once: wait a little
                    await asyncio.sleep(min(0.05 * 2 ** (attempt // len(self._channels)), 1.0))
                continue
            self.answered(sent)
            return response, maybe_applied

    async def unary_on(self, index: int, method: str, request: bytes, timeout: float) -> bytes:
        """One call to the endpoint at `index` only (what is asked of each member, as its version)."""
        return await self._channels[index].unary_unary(method)(request, timeout=timeout)

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()


# Failures where etcd never took the request: no connection, or a member that refused it unproposed.
_NOT_SENT = (
    "failed to connect",
    "connection refused",
    "no address",
    "no connection",
    "etcdserver: no leader",
    "etcdserver: not capable",
)


def _never_sent(err: grpc.aio.AioRpcError) -> bool:
    details = (err.details() or "").lower()
    return any(text in details for text in _NOT_SENT)
