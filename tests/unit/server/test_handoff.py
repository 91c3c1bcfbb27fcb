"""The connection handoff of --workers: each accepted connection goes to the worker holding the fewest."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import socket
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from kube_apiserver.server import handoff
from kube_apiserver.server.handoff import ConnectionDispatcher, ConnectionReceiver


class FakeWorker:
    """A worker's receiving side whose connections open at once (no TLS) and close when the test says."""

    def __init__(self, dispatcher: ConnectionDispatcher):
        self.receiver = ConnectionReceiver(dispatcher.add_worker(), self.take)
        self.connections: list[socket.socket] = []

    def take(self, sock: socket.socket) -> None:
        self.connections.append(sock)
        self.receiver.connections.add(sock)
        self.receiver.settled()

    def close_connections(self, n: int) -> None:
        for sock in self.connections[:n]:
            self.receiver.connections.discard(sock)
            sock.close()
        del self.connections[:n]


async def settle() -> None:
    """Turns of the loop, each polling for I/O: enough for an accepted connection to cross to its worker and the
    worker's report to come back (within one process, each a step the kernel has ready at once)."""
    for _ in range(50):
        await asyncio.sleep(0)


async def connect(port: int, n: int) -> list[socket.socket]:
    clients = []
    for _ in range(n):
        client = socket.create_connection(("127.0.0.1", port))
        clients.append(client)
        await settle()
    return clients


def in_loop(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    @functools.wraps(test)
    def run() -> None:
        asyncio.run(test())
    return run


@contextlib.asynccontextmanager
async def dispatching(workers: int) -> AsyncIterator[tuple[int, list[FakeWorker], list[socket.socket]]]:
    """A dispatcher on an ephemeral port with its (not yet started) workers; the clients the test appends are
    closed after."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    dispatcher = ConnectionDispatcher(listener)
    fakes = [FakeWorker(dispatcher) for _ in range(workers)]
    clients: list[socket.socket] = []
    try:
        yield listener.getsockname()[1], fakes, clients
    finally:
        for sock in clients:
            sock.close()
        for fake in fakes:
            fake.receiver.close()
        dispatcher.close()


@in_loop
async def test_connections_go_to_the_worker_holding_fewer() -> None:
    async with dispatching(2) as (port, (first, second), clients):
        first.receiver.start()
        second.receiver.start()
        clients += await connect(port, 6)
        assert (len(first.connections), len(second.connections)) == (3, 3)
        first.close_connections(2)
        clients += await connect(port, 2)
        assert (len(first.connections), len(second.connections)) == (3, 3)


@in_loop
async def test_a_burst_spreads_evenly_before_any_report() -> None:
    """Connections handed but not yet reported count as the worker's own: without that, a burst accepted in
    one go would all go to the worker whose last report said fewest."""
    async with dispatching(2) as (port, (first, second), clients):
        first.receiver.start()
        second.receiver.start()
        clients += await connect(port, 2)
        second.close_connections(1)
        await settle()  # reported: the first holds 1, the second 0
        loop = asyncio.get_running_loop()
        loop.remove_reader(first.receiver.sock.fileno())  # the first reads nothing while the burst is handed out
        clients += [socket.create_connection(("127.0.0.1", port)) for _ in range(7)]
        await settle()
        assert len(second.connections) == 4
        loop.add_reader(first.receiver.sock.fileno(), first.receiver._receive)
        await settle()
        assert len(first.connections) == 4


@in_loop
async def test_a_connection_waits_for_the_first_worker_that_serves() -> None:
    async with dispatching(1) as (port, (worker,), clients):
        clients += await connect(port, 1)
        assert worker.connections == []  # in the backlog: not accepted, not refused
        worker.receiver.start()
        await settle()
        assert len(worker.connections) == 1


@in_loop
async def test_a_worker_that_is_gone_is_passed_over() -> None:
    async with dispatching(2) as (port, (gone, serving), clients):
        gone.receiver.start()
        serving.receiver.start()
        await settle()
        gone.receiver.close()  # exited
        clients += await connect(port, 3)
        assert gone.connections == [] and len(serving.connections) == 3


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


def test_accepting_pauses_while_out_of_descriptors_and_resumes_after(monkeypatch) -> None:
    """The dispatcher of --workers out of descriptors: accept fails (EMFILE) and the connection stays in the
    backlog, so the listener stays readable. It must pause accepting, not be called again every turn of the
    storage process's loop (a busy loop logging a warning each time while that loop serves every worker's
    storage)."""
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
            await settle()  # its report: the dispatcher accepts
            client = socket.create_connection(sock.getsockname())
            await settle()
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
