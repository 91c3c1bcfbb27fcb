"""Kept-alive HTTPS connections to a test server, one per calling thread: a test's requests reuse one
connection instead of paying a TLS handshake each (a few milliseconds of CPU on both sides, in the same
process when the server runs in a thread)."""

from __future__ import annotations

import http.client
import select
import threading
from collections.abc import Callable

Connect = Callable[[float], http.client.HTTPSConnection]
# Failures of a kept connection that the server closed while it was idle: the request is sent again, once,
# on a new one (the server did not read it).
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class KeptConnections:
    def __init__(self, connect: Connect):
        self._connect = connect
        self._local = threading.local()
        self._open: set[http.client.HTTPSConnection] = set()
        self._lock = threading.Lock()

    def take(self, timeout: float) -> tuple[http.client.HTTPSConnection, bool]:
        """This thread's kept connection when it is still open, else a new one; and whether it was kept."""
        conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None and _open(conn):
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            return conn, True
        if conn is not None:
            self.discard(conn)
        conn = self._connect(timeout)
        with self._lock:
            self._open.add(conn)
        return conn, False

    def give_back(self, conn: http.client.HTTPSConnection) -> None:
        self._local.conn = conn

    def discard(self, conn: http.client.HTTPSConnection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)

    def close_all(self) -> None:
        """At the server's stop: every thread's next request connects again."""
        with self._lock:
            kept, self._open = self._open, set()
        for conn in kept:
            conn.close()


def _open(conn: http.client.HTTPSConnection) -> bool:
    """Connected, and nothing to read: an idle connection the server closed reads as its end."""
    if conn.sock is None:
        return False
    try:
        return not select.select([conn.sock], [], [], 0)[0]
    except (OSError, ValueError):
        return False
