"""The storage process closes a worker's connection that speaks something else than its framing (an unknown
operation, a frame length past the bound) instead of failing inside its event loop."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from kube_apiserver.storage.kvsocket import KVServer, wire
from kube_apiserver.storage.memory.kv import MemoryKV


@pytest.mark.parametrize("sent", [wire.frame((1, "bogus")), struct.pack(">I", wire.MAX_FRAME + 1)])
def test_a_connection_that_breaks_the_framing_is_closed(sent: bytes) -> None:
    async def main() -> bytes:
        server = KVServer(MemoryKV())
        ours, theirs = socket.socketpair()
        await server.serve(ours)
        theirs.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(theirs, sent)
        answer = await asyncio.wait_for(loop.sock_recv(theirs, 100), 5)
        theirs.close()
        return answer

    assert asyncio.run(main()) == b""  # closed, nothing answered
