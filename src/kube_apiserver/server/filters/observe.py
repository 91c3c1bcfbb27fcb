"""Answering a request while noting its status code and duration (for metrics and logs)."""

from __future__ import annotations

import time
from collections.abc import Callable

from ...apimachinery import errors
from ...endpoints.http import Handler, Request, Response

Observer = Callable[[int, float], None]  # (status code, seconds)


async def serve_observed(handler: Handler, req: Request, observe: Observer) -> Response:
    start = time.perf_counter()
    code = 500
    try:
        resp = await handler(req)
        code = resp.status
        return resp
    except errors.StatusError as err:
        code = err.code
        raise
    finally:
        observe(code, time.perf_counter() - start)
