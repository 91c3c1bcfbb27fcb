"""An answer of the storage process larger than a frame may be (wire.MAX_FRAME, 1 GiB: an unpaginated range of a
big store, a watch batch of a restore) was sent all the same; the worker's decoder took its length for a broken
connection and closed it, so the worker lost its storage and stopped, and with it the whole server (the
storage process stops the others). The one request fails instead. Shown with MAX_FRAME lowered."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kube_apiserver.storage.kvsocket import KVServer, RemoteKV, wire
from kube_apiserver.storage.memory.kv import MemoryKV


def test_an_answer_over_the_frame_bound_fails_its_request_not_the_connection(monkeypatch) -> None:
    monkeypatch.setattr(wire, "MAX_FRAME", 1024)

    async def main() -> None:
        store = MemoryKV()
        await store.create("/big", b"x" * 4096)
        await store.create("/small", b"y")
        server = KVServer(store)
        ours, theirs = socket.socketpair()
        await server.serve(ours)
        lost = asyncio.Event()
        remote = await RemoteKV.connect(theirs, on_lost=lost.set)
        try:
            with pytest.raises(Exception, match="over the 1024-byte frame bound"):
                await remote.get("/big")
            assert not lost.is_set()
            assert (await remote.get("/small")).value == b"y"
        finally:
            await remote.close()
            server.close()
            await store.close()

    asyncio.run(main())


def test_a_watch_batch_over_the_frame_bound_ends_that_watch_with_an_error(monkeypatch) -> None:
    monkeypatch.setattr(wire, "MAX_FRAME", 1024)

    async def main() -> None:
        store = MemoryKV()
        server = KVServer(store)
        ours, theirs = socket.socketpair()
        await server.serve(ours)
        lost = asyncio.Event()
        remote = await RemoteKV.connect(theirs, on_lost=lost.set)
        try:
            start = await store.current_revision()
            await store.create("/big", b"x" * 4096)
            with pytest.raises(Exception, match="over the 1024-byte frame bound"):
                async for _ in remote.watch("/", "0", start + 1):
                    pass
            assert not lost.is_set()
            await store.create("/small", b"y")
            assert (await remote.get("/small")).value == b"y"
        finally:
            await remote.close()
            server.close()
            await store.close()

    asyncio.run(main())
