"""The audit hook: where an audit backend sees each request and its answer. With no backend
configured (no audit flags yet) the filter is not installed at all."""

from __future__ import annotations

from typing import Protocol

from ...endpoints.http import Handler, Request, Response


class AuditBackend(Protocol):
    async def request_received(self, req: Request) -> None: ...

    async def response_complete(self, req: Request, resp: Response) -> None: ...


def with_audit(handler: Handler, backend: AuditBackend | None) -> Handler:
    if backend is None:
        return handler

    async def auditing(req: Request) -> Response:
        await backend.request_received(req)
        resp = await handler(req)
        await backend.response_complete(req, resp)
        return resp
    return auditing
