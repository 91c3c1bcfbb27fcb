"""A worker whose storage process is gone: its requests and its watches fail with StorageUnavailableError (a
ConnectionError, which the watch caches and the lease release report in one line), not a RemoteError as if
the storage process had answered with a failure."""

from __future__ import annotations

import asyncio
import socket

import pytest

from kube_apiserver.storage.kvsocket import KVServer, RemoteKV
from kube_apiserver.storage.kvsocket.client import StorageUnavailableError
from kube_apiserver.storage.memory.kv import MemoryKV


def test_a_lost_connection_fails_the_watches_and_requests_with_storage_unavailable() -> None:
    async def main() -> None:
        store = MemoryKV()
        server = KVServer(store)
        ours, theirs = socket.socketpair()
        await server.serve(ours)
        lost = asyncio.Event()
        remote = await RemoteKV.connect(theirs, on_lost=lost.set)
        start = await store.current_revision()

        async def watch() -> None:
            async for _ in remote.watch("/", "0", start + 1):
                pass

        watching = asyncio.ensure_future(watch())
        await asyncio.sleep(0.05)
        server.close()  # the storage process goes
        await asyncio.wait_for(lost.wait(), 5)
        with pytest.raises(StorageUnavailableError, match="the storage process closed the connection"):
            await asyncio.wait_for(watching, 5)
        with pytest.raises(StorageUnavailableError):
            await remote.get("/a")
        await remote.close()
        await store.close()

    asyncio.run(main())
