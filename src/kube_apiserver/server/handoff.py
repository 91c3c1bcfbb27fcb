"""Connection handoff between processes serving one port (--workers): one process accepts every connection
and hands each, as a descriptor over a unix socket pair (SCM_RIGHTS), to the worker that holds the fewest.

The kernel's own spreading (SO_REUSEPORT) hashes each connection to a listener, blind to load: 16 kept-alive
connections often land 10 and 6, and the busier worker then sets the pace while the other idles. Clients
keep connections for their lifetime, so where a connection lands is where its load stays.

A worker reports back (connections received, connections open) when that changes, once per turn of its
loop; the dispatcher counts a connection it handed as open until the worker's report includes it, so a burst
of connections spreads evenly before any report arrives."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import logging
import socket
import struct
from collections.abc import Callable

log = logging.getLogger("kube_apiserver.server")

REPORT = struct.Struct("!QQ")  # a worker's (connections received, connections open)
ACCEPTS_PER_WAKE = 64  # a burst is accepted in one go, yet the dispatcher's loop keeps turning
MARK = b"c"  # the byte each handed descriptor travels with
ACCEPT_RETRY_DELAY = 1.0  # seconds accepting pauses when the process is out of descriptors (as asyncio's servers)
OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class _Worker:
    __slots__ = ("sock", "handed", "received", "open", "ready", "pending")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.handed = 0  # connections handed to it
        self.received = 0  # of them, the ones its last report had taken
        self.open = 0  # open in its last report
        self.ready = False  # it reported: it serves
        self.pending = b""

    def load(self) -> int:
        return self.open + self.handed - self.received


class ConnectionDispatcher:
    """The accepting side: `listener` is bound; it listens at once (connections wait in its backlog) and
    accepts once a worker has reported."""

    def __init__(self, listener: socket.socket, backlog: int = 2048):
        self.listener = listener
        self.workers: list[_Worker] = []
        self._turn = itertools.count()
        self._accepting = False
        self._retry: asyncio.TimerHandle | None = None  # accepting paused until then (out of descriptors)
        self._loop: asyncio.AbstractEventLoop | None = None
        listener.listen(backlog)
        listener.setblocking(False)

    def add_worker(self) -> socket.socket:
        """A new worker's end of its socket pair (to pass to it; close this process's copy after)."""
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        worker = _Worker(ours)
        self.workers.append(worker)
        self._loop = self._loop or asyncio.get_running_loop()
        self._loop.add_reader(ours.fileno(), self._read_report, worker)
        return theirs

    def close(self) -> None:
        loop = self._loop
        for worker in self.workers:
            if loop is not None:
                loop.remove_reader(worker.sock.fileno())
            worker.sock.close()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if loop is not None and self._accepting and self.listener.fileno() >= 0:
            loop.remove_reader(self.listener.fileno())
        self.workers.clear()
        self.listener.close()

    def _read_report(self, worker: _Worker) -> None:
        try:
            data = worker.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the worker is gone: hand it nothing more
            assert self._loop is not None
            self._loop.remove_reader(worker.sock.fileno())
            worker.ready = False
            return
        data = worker.pending + data
        whole = len(data) - len(data) % REPORT.size
        worker.pending = data[whole:]
        if whole:
            worker.received, worker.open = REPORT.unpack_from(data, whole - REPORT.size)
            worker.ready = True
            if not self._accepting:
                self._accepting = True
                assert self._loop is not None
                self._loop.add_reader(self.listener.fileno(), self._accept)

    def _accept(self) -> None:
        for _ in range(ACCEPTS_PER_WAKE):
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:
                if err.errno in OUT_OF_RESOURCES:
                    # The connection stays in the backlog, the listener readable: without a pause the loop
                    # would call this again at once, every turn, and the storage it serves would wait.
                    log.warning("accepting a connection failed: %s; retrying in %g s", err, ACCEPT_RETRY_DELAY)
                    self._pause_accepting()
                else:  # a connection reset in the backlog: the next one
                    log.warning("accepting a connection failed: %s", err)
                return
            with conn:
                with contextlib.suppress(OSError):
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._hand(conn)

    def _pause_accepting(self) -> None:
        assert self._loop is not None
        self._loop.remove_reader(self.listener.fileno())
        self._retry = self._loop.call_later(ACCEPT_RETRY_DELAY, self._resume_accepting)

    def _resume_accepting(self) -> None:
        self._retry = None
        if self._loop is not None and self.listener.fileno() >= 0:
            self._loop.add_reader(self.listener.fileno(), self._accept)

    def _hand(self, conn: socket.socket) -> None:
        """To the ready worker with the fewest connections (ties in turn); a worker whose socket is full or
        gone is passed over; with none left, the connection closes."""
        ready = [worker for worker in self.workers if worker.ready]
        if not ready:
            return
        start = next(self._turn)
        ordered = sorted((ready[(start + i) % len(ready)] for i in range(len(ready))), key=_Worker.load)
        for worker in ordered:
            try:
                socket.send_fds(worker.sock, [MARK], [conn.fileno()])
            except OSError:
                continue
            worker.handed += 1
            return


class OpenConnections(set):  # type: ignore[type-arg]
    """The server's set of open connections (uvicorn adds and discards each protocol), telling `changed`."""

    def __init__(self, changed: Callable[[], None]):
        super().__init__()
        self.changed = changed

    def add(self, connection: object) -> None:
        super().add(connection)
        self.changed()

    def discard(self, connection: object) -> None:
        super().discard(connection)
        self.changed()


class ConnectionReceiver:
    """The worker's side: each received connection goes to `on_connection`; the dispatcher hears how many
    of `connections` are open (the first report, at start, says this worker serves)."""

    def __init__(self, sock: socket.socket, on_connection: Callable[[socket.socket], None]):
        self.sock = sock
        self.on_connection = on_connection
        self.connections = OpenConnections(self._changed)
        self.received = 0
        self.handshaking = 0  # received, not yet open (nor failed): counted as handed until then
        self._reported: tuple[int, int] | None = None
        self._report_due = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        self.sock.setblocking(False)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.sock.fileno(), self._receive)
        self.report()

    def settled(self) -> None:
        """One received connection is open (in `connections`) or failed its handshake."""
        self.handshaking -= 1
        self._changed()

    def _changed(self) -> None:
        if not self._report_due and self._loop is not None:
            self._report_due = True
            self._loop.call_soon(self.report)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
            self._loop = None
        self.sock.close()

    def report(self) -> None:
        self._report_due = False
        state = (self.received - self.handshaking, len(self.connections))
        if state == self._reported or self.sock.fileno() < 0:
            return
        try:
            self.sock.send(REPORT.pack(*state))
        except (BlockingIOError, InterruptedError):  # the dispatcher is behind: the next change reports
            return
        except OSError:
            return  # the dispatcher is gone; the storage process's loss stops this worker
        self._reported = state

    def _receive(self) -> None:
        for _ in range(ACCEPTS_PER_WAKE):
            try:
                marks, fds, _, _ = socket.recv_fds(self.sock, len(MARK) * 16, 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                marks, fds = b"", []
            if not marks:
                if self._loop is not None:  # the dispatcher is gone: nothing more will come
                    self._loop.remove_reader(self.sock.fileno())
                return
            for fd in fds:
                self.received += 1
                self.handshaking += 1
                self.on_connection(socket.socket(fileno=fd))
