"""KVServer: the storage process's side. Each worker's connection is served by its own protocol instance:
a request runs as a task (writes join the KV's group commit together), its answer is one frame; a watch is
a task that forwards the KV's batches until the worker cancels it or the connection closes."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable, Coroutine
from typing import Any

from ..kv import KV
from . import wire

log = logging.getLogger("kube_apiserver.storage.kvsocket")


class KVServer:
    def __init__(self, kv: KV, on_serving: Callable[[], None] = lambda: None):
        self.kv = kv
        self.on_serving = on_serving  # called when a worker says it serves
        self._connections: set[_Connection] = set()

    async def serve(self, sock: socket.socket) -> None:
        """Serves the worker at the other end of `sock` (one end of a socket pair) until it hangs up."""
        loop = asyncio.get_running_loop()
        await loop.connect_accepted_socket(lambda: _Connection(self), sock)

    def close(self) -> None:
        for connection in list(self._connections):
            connection.close()


class _Connection(asyncio.Protocol):
    def __init__(self, server: KVServer):
        self.server = server
        self.kv = server.kv
        self.transport: asyncio.Transport | None = None
        self.outbox: wire.Outbox | None = None
        self.decoder = wire.Decoder()
        self.tasks: set[asyncio.Task[None]] = set()
        self.watches: dict[int, asyncio.Task[None]] = {}
        self.writable = asyncio.Event()  # cleared while the worker is behind (pause_writing)
        self.writable.set()
        self.ops: dict[str, Callable[..., Coroutine[Any, Any, Any]]] = {
            "get": self._get, "range": self._range, "count": self.kv.count, "create": self._create,
            "update": self._update, "delete": self._delete, "current_revision": self.kv.current_revision,
            "compacted_revision": self.kv.compacted_revision, "compact": self.kv.compact,
        }

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        self.outbox = wire.Outbox(self.transport)
        self.server._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server._connections.discard(self)
        self.writable.set()
        for task in [*self.tasks, *self.watches.values()]:
            task.cancel()

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        try:
            for message in self.decoder.feed(data):
                self._dispatch(message)
        except ValueError as err:  # not our framing: the peer is broken
            log.error("closing a worker's storage connection: %s", err)
            self.close()

    def _dispatch(self, message: tuple) -> None:
        request_id, op = message[0], message[1]
        if op == "watch":
            watch_id, start, end, revision = message[2:]
            self.watches[watch_id] = asyncio.ensure_future(self._watch(watch_id, start, end, revision))
        elif op == "cancel":
            task = self.watches.pop(message[2], None)
            if task is not None:
                task.cancel()
        elif op == "progress":
            self.kv.request_progress()
        elif op == "serving":
            self.server.on_serving()
        elif op in self.ops:
            task = asyncio.ensure_future(self._answer(request_id, self.ops[op], message[2:]))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        else:
            raise ValueError(f"unknown operation {op!r}")

    def _send(self, message: tuple) -> None:
        if self.outbox is not None:
            self.outbox.send(message)

    async def _answer(self, request_id: int, op: Callable[..., Coroutine[Any, Any, Any]], args: tuple) -> None:
        try:
            result = await op(*args)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - the worker raises it in its caller
            self._send((request_id, wire.ERROR, wire.error_out(err)))
        else:
            try:
                self._send((request_id, wire.OK, result))
            except wire.FrameTooLargeError as err:  # this request fails, not the worker's connection
                self._send((request_id, wire.ERROR, wire.error_out(err)))

    async def _get(self, key: str) -> tuple | None:
        return wire.kv_out(await self.kv.get(key))

    async def _range(self, start: str, end: str, revision: int, limit: int) -> tuple:
        return wire.range_out(await self.kv.range(start, end, revision, limit))

    async def _create(self, key: str, value: bytes, ttl: float) -> tuple:
        return wire.txn_out(await self.kv.create(key, value, ttl))

    async def _update(self, key: str, value: bytes, expected: int, ttl: float) -> tuple:
        return wire.txn_out(await self.kv.update(key, value, expected, ttl))

    async def _delete(self, key: str, expected: int) -> tuple:
        return wire.txn_out(await self.kv.delete(key, expected))

    async def _watch(self, watch_id: int, start: str, end: str, revision: int) -> None:
        try:
            async for batch in self.kv.watch(start, end, revision):
                self._send((0, wire.WATCH, watch_id, wire.BATCH, wire.batch_out(batch)))
                if not self.writable.is_set():  # the worker is behind: the KV's watch queue holds the rest
                    await self.writable.wait()
            self._send((0, wire.WATCH, watch_id, wire.END, None))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - raised in the worker's watch
            self._send((0, wire.WATCH, watch_id, wire.ERROR, wire.error_out(err)))
        finally:
            self.watches.pop(watch_id, None)


WRITE_BUFFER_HIGH = 4 << 20
