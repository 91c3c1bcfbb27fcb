"""CORS (k8s.io/apiserver/pkg/server/filters/cors.go WithCORS, as kube-apiserver installs it with
--cors-allowed-origins): a request whose Origin matches one of the patterns gets the Access-Control-*
headers, and its preflight OPTIONS is answered 204 here, before authentication."""

from __future__ import annotations

import re

from ...apimachinery import errors
from ...endpoints.handlers.responses import write_status_error
from ...endpoints.http import Handler, Request, Response

ALLOWED_METHODS = ("POST", "GET", "OPTIONS", "PUT", "DELETE", "PATCH")
ALLOWED_HEADERS = (
    "Content-Type",
    "Content-Length",
    "Accept-Encoding",
    "X-CSRF-Token",
    "Authorization",
    "X-Requested-With",
    "If-Modified-Since",
)
EXPOSED_HEADERS = ("Date",)


def with_cors(handler: Handler, allowed_origins: list[str]) -> Handler:
    """Patterns are unanchored regular expressions (Go's MatchString); none turns CORS off."""
    if not allowed_origins:
        return handler
    patterns = [re.compile(origin) for origin in allowed_origins]  # validated with the flags
    cors_headers = [
        ("access-control-allow-methods", ", ".join(ALLOWED_METHODS)),
        ("access-control-allow-headers", ", ".join(ALLOWED_HEADERS)),
        ("access-control-expose-headers", ", ".join(EXPOSED_HEADERS)),
        ("access-control-allow-credentials", "true"),
    ]
    names = {"access-control-allow-origin", *(name for name, _ in cors_headers)}

    async def cors(req: Request) -> Response:
        origin = req.headers.get("origin", "")
        if not origin or not any(pattern.search(origin) for pattern in patterns):
            return await handler(req)
        headers = [("access-control-allow-origin", origin), *cors_headers]
        if req.method == "OPTIONS":  # a preflight stops here
            return Response(204, b"", "", headers)
        try:
            resp = await handler(req)
        except errors.StatusError as err:  # Go sets the headers before the handler writes, errors included
            resp = write_status_error(req, err)
        resp.headers = [h for h in resp.headers if h[0].lower() not in names] + headers
        return resp

    return cors
