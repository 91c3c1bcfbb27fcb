"""Request info: the path is parsed once; every later filter and handler reads req.info."""

from __future__ import annotations

from ...endpoints.http import Handler, Request, Response
from ...endpoints.request_info import new_request_info


def with_request_info(handler: Handler) -> Handler:
    async def resolving(req: Request) -> Response:
        req.info = new_request_info(req.method, req.path, req.query)
        return await handler(req)
    return resolving
