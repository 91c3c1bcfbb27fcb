"""A request a subresource answers itself (k8s handlers.ConnectResource: exec, attach, port-forward,
proxy, log): the storage gets the name and the query, and returns the response."""

from __future__ import annotations

from ..http import Request, Response
from .scope import RequestScope


async def connect(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    return await scope.storage.connect(ctx, req.info.name, req.query, req)
