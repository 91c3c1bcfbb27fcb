"""Request logging at -v=3, one line per request as kube-apiserver's httplog writes it."""

from __future__ import annotations

import logging
import time

from ... import logs
from ...apimachinery import errors
from ...endpoints.http import Handler, Request, Response

log = logging.getLogger("kube_apiserver.httplog")
VERBOSITY = 3


def with_httplog(handler: Handler) -> Handler:
    async def logging_requests(req: Request) -> Response:
        if not logs.V(VERBOSITY):
            return await handler(req)
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
            uri = req.path + (f"?{req.query_string.decode('latin-1')}" if req.query_string else "")
            latency = (time.perf_counter() - start) * 1000
            log.info('"HTTP" verb="%s" URI="%s" latency="%.3fms" userAgent="%s" srcIP="%s" resp=%d',
                     req.method, uri, latency, req.headers.get("user-agent", ""), req.remote_addr, code)
    return logging_requests
