"""Timeout for requests that are not long-running (watch, proxy, exec... are exempt)."""

from __future__ import annotations

import asyncio

from ...apimachinery import errors
from ...apimachinery.goduration import parse_duration
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
            user_seconds = _requested_timeout(requested)
            if 0 < user_seconds < timeout:  # 0s or more than the maximum: the server's own timeout
                seconds = user_seconds
        try:
            async with asyncio.timeout(seconds):  # no task per request, unlike wait_for
                return await handler(req)
        except TimeoutError:
            raise errors.timeout("request did not complete within requested timeout - context deadline "
                                 "exceeded") from None
    return timing_out


def _requested_timeout(value: str) -> float:
    """?timeout= as WithRequestDeadline reads it: Go's time.ParseDuration ("1m30s", "500ms"), else 400."""
    try:
        return parse_duration(value)
    except ValueError as err:
        raise errors.bad_request(f"invalid timeout specified in the request URL - {err}") from None
