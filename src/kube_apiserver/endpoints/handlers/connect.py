"""A request a subresource answers itself (k8s handlers.ConnectResource: exec, attach, port-forward,
proxy, log): the storage gets the name and the query, and returns the response."""

from __future__ import annotations

from ...apimachinery import errors
from ..http import Request, Response
from .responses import warning_headers
from .scope import RequestScope


def subpath(req: Request) -> str:
    """getRequestOptions: what follows the subresource in the path, with a leading slash, and a trailing one
    when the request has one."""
    path = "/".join(req.info.parts[3:])
    if path and not path.startswith("/"):
        path = "/" + path
    if req.path.endswith("/") and not path.endswith("/"):
        path += "/"
    return path


async def connect(scope: RequestScope, req: Request) -> Response:
    methods = getattr(scope.storage, "connect_methods", None)
    if methods is not None and req.method not in methods:
        raise errors.method_not_allowed()  # only ConnectMethods() are routed
    ctx = scope.context(req)
    options = req.query
    key = getattr(scope.storage, "subpath_key", "")
    if key:  # NewConnectOptions with a subpath: it replaces that query parameter
        options = {**options, key: [subpath(req)]}
    response = await scope.storage.connect(ctx, req.info.name, options, req)
    response.headers.extend(warning_headers(req))  # endpoint-level warnings are written before the handler
    return response
