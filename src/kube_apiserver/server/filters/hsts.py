"""HSTS (k8s.io/apiserver/pkg/server/filters/hsts.go WithHSTS, --strict-transport-security-directives): every
response carries Strict-Transport-Security with the directives joined by "; ", unless it already has one."""

from __future__ import annotations

from ...apimachinery import errors
from ...endpoints.handlers.responses import write_status_error
from ...endpoints.http import Handler, Request, Response

HEADER = "strict-transport-security"


def with_hsts(handler: Handler, directives: list[str]) -> Handler:
    if not directives:
        return handler
    header = ("Strict-Transport-Security", "; ".join(directives))

    async def hsts(req: Request) -> Response:
        try:
            resp = await handler(req)
        except errors.StatusError as err:  # Go sets the header before the handler writes, errors included
            resp = write_status_error(req, err)
        if not any(name.lower() == HEADER for name, _ in resp.headers):
            resp.headers.append(header)
        return resp

    return hsts
