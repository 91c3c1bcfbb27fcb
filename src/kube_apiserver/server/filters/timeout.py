"""Timeout for requests that are not long-running (watch, proxy, exec... are exempt)."""

from __future__ import annotations

import asyncio

from ...apimachinery import errors
from ...endpoints.http import Handler, Request, Response

LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
LONG_RUNNING_SUBRESOURCES = frozenset({"proxy", "log", "exec", "attach", "portforward"})


def is_long_running(req: Request) -> bool:
    info = req.info
    return info is not None and (info.verb in LONG_RUNNING_VERBS or info.subresource in LONG_RUNNING_SUBRESOURCES)


def with_timeout(handler: Handler, timeout: float) -> Handler:
    async def timing_out(req: Request) -> Response:
        if is_long_running(req) or timeout <= 0:
            return await handler(req)
        seconds = timeout
        requested = req.param("timeout")
        if requested:
            seconds = min(timeout, _duration(requested) or timeout)
        try:
            async with asyncio.timeout(seconds):  # no task per request, unlike wait_for
                return await handler(req)
        except TimeoutError:
            raise errors.timeout("request did not complete within requested timeout - context deadline "
                                 "exceeded") from None
    return timing_out


def _duration(value: str) -> float | None:
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for suffix in ("ms", "h", "m", "s"):
        if value.endswith(suffix):
            try:
                return float(value[: -len(suffix)]) * units[suffix]
            except ValueError:
                return None
    return None
