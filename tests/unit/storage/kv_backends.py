"""The KV backends for the storage tests: the `open_kv` fixture (SQLite or memory with lease expiry running as
the server runs it, or etcd3 over the module's real etcd) and `on_each_backend`, which runs an async test on a
fresh store with keys under a prefix of its own (etcd is shared by the module)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kube_apiserver.apimachinery.wait import Periodic
from kube_apiserver.storage.kv import KV

TEST_TIMEOUT = 30.0
LEASE_EXPIRY_PERIOD = 0.05
_prefixes = itertools.count()

OpenKV = Callable[[], Awaitable[KV]]


@pytest.fixture(params=["sqlite", "memory", "etcd3", "kvsocket"])
def open_kv(request: pytest.FixtureRequest, tmp_path: Any) -> OpenKV:
    if request.param == "kvsocket":
        return lambda: open_remote(str(tmp_path))
    if request.param in ("sqlite", "memory"):
        from kube_apiserver.storage.memory import MemoryKV
        from kube_apiserver.storage.sqlite import SQLiteKV

        kind = SQLiteKV if request.param == "sqlite" else MemoryKV

        async def open_embedded() -> KV:
            kv = await kind.open(str(tmp_path))
            expiry = Periodic("lease expiry", LEASE_EXPIRY_PERIOD, kv.expire_leases)
            expiry.start()
            close = kv.close

            async def close_all() -> None:
                await expiry.stop()
                await close()

            kv.close = close_all  # type: ignore[method-assign]
            return kv

        return open_embedded
    cluster = request.getfixturevalue("etcd")
    from kube_apiserver.storage.etcd3 import EtcdKV

    async def open_etcd() -> KV:
        return await EtcdKV.open(cluster.client_urls)

    return open_etcd


async def open_remote(data_dir: str) -> KV:
    """SQLite as a --workers worker reaches it: served by a KVServer over a socket pair, through RemoteKV."""
    import socket

    from kube_apiserver.storage.kvsocket import KVServer, RemoteKV
    from kube_apiserver.storage.sqlite import SQLiteKV

    inner = await SQLiteKV.open(data_dir, commit_on_loop=True)  # as the storage process opens it
    expiry = Periodic("lease expiry", LEASE_EXPIRY_PERIOD, inner.expire_leases)
    expiry.start()
    server = KVServer(inner)
    ours, theirs = socket.socketpair()
    await server.serve(ours)
    kv = await RemoteKV.connect(theirs)
    close = kv.close

    async def close_all() -> None:
        await close()
        server.close()
        await expiry.stop()
        await inner.close()

    kv.close = close_all  # type: ignore[method-assign]
    return kv


def on_each_backend(prefix: str) -> Callable[[Callable[[KV, str], Awaitable[None]]], Callable[[OpenKV], None]]:
    """A decorator: the test runs with (kv, "/registry/<prefix><n>/") on each backend `open_kv` gives."""

    def decorate(test: Callable[[KV, str], Awaitable[None]]) -> Callable[[OpenKV], None]:
        def wrapper(open_kv: OpenKV) -> None:
            async def main() -> None:
                kv = await open_kv()
                try:
                    await asyncio.wait_for(test(kv, f"/registry/{prefix}{next(_prefixes)}/"), TEST_TIMEOUT)
                finally:
                    await kv.close()

            asyncio.run(main())

        wrapper.__name__ = test.__name__
        return wrapper

    return decorate
