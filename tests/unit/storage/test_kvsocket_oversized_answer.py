"""An answer of the storage process larger than a frame may be (wire.MAX_FRAME, 1 GiB: an unpaginated range of a
big store, a watch batch of a restore) was sent all the same; the worker's decoder took its length for a broken
connection and closed it, so the worker lost its storage and stopped, and with it the whole server (the
storage process stops the others). The one request fails instead. Shown with MAX_FRAME lowered."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import pytest

from kube_apiserver.storage.kvsocket import KVServer, RemoteKV, wire
from kube_apiserver.storage.memory.kv import MemoryKV

TOO_LARGE = "over the 1024-byte frame bound"


@pytest.fixture(autouse=True)
def _small_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "MAX_FRAME", 1024)


@contextlib.asynccontextmanager
async def served(store: MemoryKV) -> AsyncIterator[tuple[RemoteKV, asyncio.Event]]:
    """`store` as a worker reaches it, and whether the worker lost its connection."""
    server = KVServer(store)
    ours, theirs = socket.socketpair()
    await server.serve(ours)
    lost = asyncio.Event()
    remote = await RemoteKV.connect(theirs, on_lost=lost.set)
    try:
        yield remote, lost
    finally:
        await remote.close()
        server.close()
        await store.close()


def test_an_answer_over_the_frame_bound_fails_its_request_not_the_connection() -> None:
    async def main() -> None:
        store = MemoryKV()
        await store.create("/big", b"x" * 4096)
        await store.create("/small", b"y")
        async with served(store) as (remote, lost):
            with pytest.raises(Exception, match=TOO_LARGE):
                await remote.get("/big")
            assert not lost.is_set()
            assert (await remote.get("/small")).value == b"y"

    asyncio.run(main())


def test_a_watch_batch_over_the_frame_bound_ends_that_watch_with_an_error() -> None:
    async def main() -> None:
        store = MemoryKV()
        async with served(store) as (remote, lost):
            start = await store.current_revision()
            await store.create("/big", b"x" * 4096)
            with pytest.raises(Exception, match=TOO_LARGE):
                async for _ in remote.watch("/", "0", start + 1):
                    pass
            assert not lost.is_set()
            await store.create("/small", b"y")
            assert (await remote.get("/small")).value == b"y"

    asyncio.run(main())
