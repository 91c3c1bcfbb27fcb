"""RemoteKV: the KV interface of the storage process, as a worker reaches it over its socket. Requests are
pipelined on the one connection (each answered by id); a watch is a queue the connection fills."""

from __future__ import annotations

import asyncio
import itertools
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..kv import KeyValue, KVBatch, RangeResult, StorageUnavailableError, TxnResult
from . import wire

_LOST = "lost"  # a watch's queue: the connection is gone (what a watch raises then is this side's error)


class RemoteKV:
    exclusive = False  # other workers write the same store: their conflicts are not ordered here
    progress_requests_supported = True  # the embedded KV queues a progress notification behind every batch

    def __init__(self, on_lost: Callable[[], None] = lambda: None) -> None:
        self.on_lost = on_lost  # told when the storage process closes the connection (not when this side does)
        self._closing = False
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._watches: dict[int, asyncio.Queue[tuple]] = {}
        self._transport: asyncio.Transport | None = None
        self._outbox: wire.Outbox | None = None
        self._lost: Exception | None = None
        self._decoder = wire.Decoder()

    @classmethod
    async def connect(cls, sock: socket.socket, on_lost: Callable[[], None] = lambda: None) -> RemoteKV:
        kv = cls(on_lost)
        loop = asyncio.get_running_loop()
        await loop.create_unix_connection(lambda: _Protocol(kv), sock=sock)
        return kv

    # ---- the connection ----

    def _received(self, data: bytes) -> None:
        for message in self._decoder.feed(data):
            request_id = message[0]
            if request_id:
                future = self._pending.pop(request_id, None)
                if future is not None and not future.done():
                    if message[1] == wire.OK:
                        future.set_result(message[2])
                    else:
                        future.set_exception(wire.error_in(message[2]))
            else:
                queue = self._watches.get(message[2])
                if queue is not None:
                    queue.put_nowait(message[3:])

    def _connection_lost(self, exc: Exception | None) -> None:
        self._transport = self._outbox = None
        self._lost = StorageUnavailableError("the storage process closed the connection")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._lost)
        self._pending.clear()
        for queue in self._watches.values():
            queue.put_nowait((_LOST, None))
        if not self._closing:
            self.on_lost()

    def _call(self, op: str, *args: Any) -> asyncio.Future[Any]:
        if self._transport is None:
            raise self._lost or StorageUnavailableError("not connected")
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._send((request_id, op, *args))
        except BaseException:
            del self._pending[request_id]
            raise
        return future

    def _send(self, message: tuple) -> None:
        if self._outbox is not None:
            self._outbox.send(message)

    # ---- KV ----

    async def get(self, key: str) -> KeyValue | None:
        return wire.kv_in(await self._call("get", key))

    async def range(self, start: str, end: str, revision: int = 0, limit: int = 0) -> RangeResult:
        return wire.range_in(await self._call("range", start, end, revision, limit))

    async def count(self, start: str, end: str, revision: int = 0) -> int:
        return await self._call("count", start, end, revision)

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        return wire.txn_in(await self._call("create", key, value, float(ttl)))

    async def update(self, key: str, value: bytes, expected_mod_revision: int, ttl: float = 0) -> TxnResult:
        return wire.txn_in(await self._call("update", key, value, expected_mod_revision, float(ttl)))

    async def delete(self, key: str, expected_mod_revision: int) -> TxnResult:
        return wire.txn_in(await self._call("delete", key, expected_mod_revision))

    async def current_revision(self) -> int:
        return await self._call("current_revision")

    async def compacted_revision(self) -> int:
        return await self._call("compacted_revision")

    async def compact(self, revision: int) -> None:
        await self._call("compact", revision)

    def request_progress(self) -> None:
        self._send((0, "progress"))

    async def watch(self, start: str, end: str, start_revision: int) -> AsyncIterator[KVBatch]:
        if self._transport is None:
            raise self._lost or StorageUnavailableError("not connected")
        watch_id = next(self._ids)
        queue: asyncio.Queue[tuple] = asyncio.Queue()
        self._watches[watch_id] = queue
        self._send((0, "watch", watch_id, start, end, start_revision))
        try:
            while True:
                kind, body = await queue.get()
                if kind == wire.BATCH:
                    yield wire.batch_in(body)
                elif kind == wire.END:
                    return
                elif kind == _LOST:
                    raise self._lost or StorageUnavailableError("not connected")
                else:
                    raise wire.error_in(body)
        finally:
            del self._watches[watch_id]
            self._send((0, "cancel", watch_id))

    def serving(self) -> None:
        """Tells the storage process this worker serves (it announces the server once all of them do)."""
        self._send((0, "serving"))

    async def close(self) -> None:
        self._closing = True
        if self._transport is not None:
            self._transport.close()


class _Protocol(asyncio.Protocol):
    def __init__(self, kv: RemoteKV):
        self.kv = kv

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.kv._transport = transport  # type: ignore[assignment]
        self.kv._outbox = wire.Outbox(transport)  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        self.kv._received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.kv._connection_lost(exc)
