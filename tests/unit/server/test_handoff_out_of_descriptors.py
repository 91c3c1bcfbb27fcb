"""The dispatcher of --workers out of descriptors: accept fails (EMFILE) and the connection stays in the backlog,
so the listener stays readable. It must pause accepting, not be called again every turn of the storage
process's loop (a busy loop logging a warning each time while that loop serves every worker's storage)."""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

from kube_apiserver.server import handoff
from kube_apiserver.server.handoff import ConnectionDispatcher, ConnectionReceiver


class Exhausted:
    """The listener while the process has no descriptor left: accept fails and counts its tries."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.failing = True
        self.tries = 0

    def accept(self) -> tuple[socket.socket, Any]:
        self.tries += 1
        if self.failing:
            raise OSError(errno.EMFILE, "Too many open files")
        return self.sock.accept()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


async def turns(n: int = 50) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def test_accepting_pauses_while_out_of_descriptors_and_resumes_after(monkeypatch) -> None:
    monkeypatch.setattr(handoff, "ACCEPT_RETRY_DELAY", 3600.0, raising=False)  # the test resumes it

    async def main() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        dispatcher = ConnectionDispatcher(sock)
        listener = dispatcher.listener = Exhausted(sock)  # type: ignore[assignment]
        received: list[socket.socket] = []
        receiver = ConnectionReceiver(dispatcher.add_worker(), received.append)
        client = None
        try:
            receiver.start()
            await turns()  # its report: the dispatcher accepts
            client = socket.create_connection(sock.getsockname())
            await turns()
            assert listener.tries == 1  # paused after the failure, not tried again every turn
            assert not received
            listener.failing = False  # descriptors were freed
            dispatcher._resume_accepting()  # what its timer calls
            while not received:
                await asyncio.sleep(0)
            assert listener.tries >= 2 and len(received) == 1
        finally:
            for conn in received:
                conn.close()
            if client is not None:
                client.close()
            receiver.close()
            dispatcher.close()
            dispatcher.close()  # twice: the listener's descriptor is gone the second time

    asyncio.run(main())
