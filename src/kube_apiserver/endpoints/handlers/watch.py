"""WATCH: a chunked stream of JSON events, one per line (k8s handlers.serveWatch)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import orjson

from ...apimachinery import errors
from ...storage.interface import ERROR, StorageError
from ..http import Request, Response, StreamingResponse
from .get import list_query
from .responses import media_for, transform
from .scope import RequestScope


async def watch(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    query = list_query(req)
    media = media_for(req)
    watcher = await scope.storage.watch(ctx, query)
    timeout = query.timeout_seconds
    if not timeout:
        timeout = scope.min_request_timeout * (1 + random.random())
    content_type = media.content_type if media.convert else "application/json"
    return StreamingResponse(200, _events(scope, req, watcher, media, float(timeout)), content_type)


def _event_bytes(kind: str, obj: Any) -> bytes:
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"


async def _events(scope: RequestScope, req: Request, watcher: Any, media: Any, timeout: float,
                  ) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    stopping = asyncio.ensure_future(scope.stopping.wait())
    iterator = watcher.__aiter__()
    next_event: asyncio.Future[Any] | None = None
    try:
        while True:
            next_event = asyncio.ensure_future(iterator.__anext__())
            await asyncio.wait({next_event, stopping}, timeout=max(deadline - loop.time(), 0),
                               return_when=asyncio.FIRST_COMPLETED)
            if not next_event.done():
                return  # timed out, or the server is stopping: end the stream cleanly
            try:
                event = next_event.result()
            except StopAsyncIteration:
                return
            except StorageError as err:
                yield _event_bytes(ERROR, _storage_error_status(err))
                return
            yield _event_bytes(event.type, transform(event.object, media, scope, req))
    finally:
        stopping.cancel()
        if next_event is not None:
            if next_event.done():
                if not next_event.cancelled():
                    next_event.exception()  # retrieved: nothing is left unobserved
            else:
                next_event.cancel()
        await watcher.stop()


def _storage_error_status(err: StorageError) -> dict[str, Any]:
    from ...storage.interface import ExpiredError
    if isinstance(err, ExpiredError):
        return errors.expired(str(err)).status()
    return errors.internal_error(err).status()
