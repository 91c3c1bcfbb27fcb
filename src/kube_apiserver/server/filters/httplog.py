"""Request logging at -v=3, one line per request as kube-apiserver's httplog writes it."""

from __future__ import annotations

import logging

from ... import logs
from ...endpoints.http import Handler, Request, Response
from .observe import serve_observed

log = logging.getLogger("kube_apiserver.httplog")
VERBOSITY = 3


def with_httplog(handler: Handler) -> Handler:
    if not logs.V(VERBOSITY):
        return handler  # decided once, when the chain is built

    async def logging_requests(req: Request) -> Response:

        def write(code: int, seconds: float) -> None:
            uri = req.path + (f"?{req.query_string.decode('latin-1')}" if req.query_string else "")
            log.info('"HTTP" verb="%s" URI="%s" latency="%.3fms" userAgent="%s" srcIP="%s" resp=%d',
                     req.method, uri, seconds * 1000, req.headers.get("user-agent", ""), req.remote_addr, code)

        return await serve_observed(handler, req, write)
    return logging_requests
