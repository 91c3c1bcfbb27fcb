"""The HTTP adapter: an ASGI application around the handler chain. Request bodies are read on
demand; streaming responses (watch) are flushed chunk by chunk and stop when the client goes away."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..endpoints.http import Handler, Request, Response, StreamingResponse, UpgradeResponse

Scope = dict[str, Any]


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _raw_headers(resp: Response, extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in resp.headers] + extra


# net/http's maxPostHandlerReadBytes: what the server reads of a body the handler left, to keep the connection.
MAX_POST_HANDLER_READ_BYTES = 256 << 10


def _unread_body_too_large(req: Request) -> bool:
    """Go closes the connection after the answer rather than read more than 256 KiB of a body the handler
    did not read (a refused large body, above all); uvicorn would read all of it to find the next request."""
    if req.body_read:
        return False
    if "chunked" in req.headers.get("transfer-encoding", "").lower():
        return True
    declared = req.headers.get("content-length", "")
    return declared.isdigit() and int(declared) > MAX_POST_HANDLER_READ_BYTES


class ASGIApp:
    def __init__(self, handler: Handler):
        self.handler = handler
        self.inflight = 0  # requests being answered; shutdown waits for these, not for idle sockets

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        client = scope.get("client")
        chain = ((scope.get("extensions") or {}).get("tls") or {}).get("client_cert_chain") or [None]
        req = Request(scope["method"], scope["path"], scope.get("query_string", b""), _headers(scope), receive,
                      remote_addr=client[0] if client else "", client_cert=chain[0])
        self.inflight += 1
        try:
            await self._answer(req, scope, receive, send)
        finally:
            self.inflight -= 1

    async def _answer(self, req: Request, scope: Scope, receive: Any, send: Any) -> None:
        resp = await self.handler(req)
        if isinstance(resp, UpgradeResponse):
            await self._upgrade(resp, scope, send)
            return
        if isinstance(resp, StreamingResponse):
            await self._stream(req, resp, scope, receive, send)
            return
        body = b"" if scope["method"] == "HEAD" else resp.body
        extra = [(b"content-length", str(len(resp.body)).encode())]
        if _unread_body_too_large(req):
            extra.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": resp.status, "headers": _raw_headers(resp, extra)})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    async def _upgrade(resp: UpgradeResponse, scope: Scope, send: Any) -> None:
        """The 101 head and the frames go straight to the transport (ASGI's http type cannot switch
        protocols); the connection is closed after them. Without a transport (no socket), a 400."""
        connection = (scope.get("extensions") or {}).get("kube.connection")
        transport = getattr(connection, "transport", None)
        cycle = getattr(connection, "cycle", None)
        if transport is None or cycle is None:
            body = b"unable to upgrade: this connection cannot switch protocols"
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        cycle.response_started = cycle.response_complete = True  # uvicorn writes nothing more on it
        head = "".join(f"{name}: {value}\r\n" for name, value in resp.headers)
        transport.write(f"HTTP/1.1 101 Switching Protocols\r\n{head}\r\n".encode("latin-1"))
        try:
            async for frame in resp.frames:
                if transport.is_closing():
                    break
                transport.write(frame)
        finally:
            transport.close()

    @staticmethod
    async def _stream(req: Request, resp: StreamingResponse, scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": resp.status,
                    "headers": _raw_headers(resp, [(b"transfer-encoding", b"chunked")])})
        # The body's chunks go straight to the transport when the connection offers it (a watch writes its
        # events from callbacks through req.chunk_writer); the last chunk always goes through send.
        connection = (scope.get("extensions") or {}).get("kube.connection")
        writer = connection.chunk_writer() if connection is not None else None
        req.chunk_writer = writer

        async def pump() -> None:
            async for chunk in resp.chunks:
                if writer is None:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    continue
                if not writer.writable:
                    await writer.drain()
                writer.write(chunk)

        async def wait_disconnect() -> None:
            while not req.disconnected:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return

        pumping = asyncio.ensure_future(pump())
        watching = asyncio.ensure_future(wait_disconnect())
        try:
            await asyncio.wait({pumping, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pumping, watching):
                task.cancel()
            for task in (pumping, watching):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            with contextlib.suppress(Exception):
                await resp.chunks.aclose()  # type: ignore[attr-defined]
            req.chunk_writer = None
            if writer is not None:
                writer.close()  # nothing written past the last chunk
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
