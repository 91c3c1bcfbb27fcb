"""Graceful shutdown as kube-apiserver's filters do it (k8s.io/apiserver/pkg/server/filters: WithRetryAfter,
WithWaitGroup, WithWatchTerminationDuringShutdown). Once the server stops accepting new requests (after
--shutdown-delay-duration and the pre-shutdown hooks):

- with --shutdown-send-retry-after, every request but health probes, /metrics and the server's own
  (User-Agent kube-apiserver/...) is answered 429 with Retry-After: 5 and Connection: close, while the
  server keeps listening until the requests in flight have drained;
- non-long-running requests that still arrive are answered 503 with Retry-After: 1;
- with --shutdown-watch-termination-grace-period, open watches end at a bounded rate (at least 200 a
  second, all within the grace period) so their clients do not all come back at once, and new watches
  are answered 503.

Each server has its own RequestWaitGroup and WatchTermination (no process-wide state)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ...apimachinery import errors
from ...endpoints.handlers.responses import write_status_error
from ...endpoints.http import Handler, Request, Response, StreamingResponse, text
from .timeout import is_long_running

EXEMPT_PATH_PREFIXES = ("/readyz", "/livez", "/healthz", "/metrics")
RETRY_AFTER_MESSAGE = "The apiserver is shutting down, please try again later."
MIN_WATCH_TERMINATION_QPS = 200.0


def is_exempt(req: Request) -> bool:
    """isRequestExemptFromRetryAfter: the server's own clients and health probes are still served."""
    return req.headers.get("user-agent", "").startswith("kube-apiserver/") or req.path.startswith(
        EXEMPT_PATH_PREFIXES
    )


def _shutting_down(req: Request) -> Response:
    """waitGroupWriteRetryAfterToResponse: a 503 Status asking to retry at once (another server may answer)."""
    resp = write_status_error(req, errors.service_unavailable("apiserver is shutting down"))
    resp.headers.append(("retry-after", "1"))
    return resp


def with_retry_after(handler: Handler, not_accepting: asyncio.Event) -> Handler:
    async def retry_after(req: Request) -> Response:
        if not not_accepting.is_set() or is_exempt(req):
            return await handler(req)
        resp = text(429, RETRY_AFTER_MESSAGE + "\n")  # Go's http.Error
        resp.headers.extend((("connection", "close"), ("retry-after", "5")))
        return resp

    return retry_after


class RequestWaitGroup:
    """The non-long-running requests in flight (a SafeWaitGroup): closed when shutdown starts waiting."""

    def __init__(self) -> None:
        self.count = 0
        self.closed = False
        self._idle = asyncio.Event()
        self._idle.set()

    def add(self) -> None:
        self.count += 1
        self._idle.clear()

    def done(self) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def wait(self, timeout: float) -> None:
        self.closed = True
        try:
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        except TimeoutError:
            pass


def with_wait_group(handler: Handler, group: RequestWaitGroup) -> Handler:
    async def counted(req: Request) -> Response:
        if is_long_running(req):
            return await handler(req)
        if group.closed:
            return await handler(req) if is_exempt(req) else _shutting_down(req)
        group.add()
        try:
            return await handler(req)
        finally:
            group.done()

    return counted


class _RateLimiter:
    """golang.org/x/time/rate with a burst of 1: the first caller passes, each next one 1/qps later."""

    def __init__(self, qps: float):
        self.interval = 1.0 / qps
        self.next_at = 0.0

    async def wait(self) -> None:
        now = asyncio.get_running_loop().time()
        at = max(now, self.next_at)
        self.next_at = at + self.interval
        if at > now:
            await asyncio.sleep(at - now)


class WatchTermination:
    """The open watches (the WatchRequestWaitGroup); draining spreads their ends over the grace period."""

    def __init__(self) -> None:
        self.active = 0
        self.closed = False
        self._limiter: _RateLimiter | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    def start_draining(self, grace: float) -> None:
        """Called before the watches are told to end, so every end is rate limited."""
        self.closed = True
        self._limiter = _RateLimiter(max(self.active / grace, MIN_WATCH_TERMINATION_QPS))

    async def wait(self, grace: float) -> None:
        try:
            async with asyncio.timeout(grace):
                await self._idle.wait()
        except TimeoutError:
            pass

    def add(self) -> None:
        self.active += 1
        self._idle.clear()

    async def done(self) -> None:
        try:
            if self._limiter is not None:
                await self._limiter.wait()
        finally:
            self.active -= 1
            if self.active == 0:
                self._idle.set()

    async def stream(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """The watch's body; its end (the last chunk) waits for its turn while the server drains."""
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await self.done()


def with_watch_termination(handler: Handler, termination: WatchTermination) -> Handler:
    async def tracked(req: Request) -> Response:
        if req.info is None or req.info.verb != "watch":
            return await handler(req)
        if termination.closed:
            return _shutting_down(req)
        termination.add()
        try:
            resp = await handler(req)
        except BaseException:
            await termination.done()
            raise
        if not isinstance(resp, StreamingResponse):
            await termination.done()
            return resp
        resp.chunks = termination.stream(resp.chunks)
        return resp

    return tracked
