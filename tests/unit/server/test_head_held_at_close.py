"""A response's head held for its body (HeadWithBody) is written before the connection itself writes or closes:
the protocol writes a refusal and closes, and the server's shutdown closes a connection whose response is
complete, on the transport underneath, which the held head did not see. A HEAD request's answer is only a
head, held until the end of the loop's turn; under uvloop a read (the next request) runs in the poll phase
between the turn that held it and the one that writes it."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from kube_apiserver.server.httpprotocol import HardenedHTTPProtocol


class Transport:
    """What the protocol writes, as a transport takes it: nothing once it is closing."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 6443), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass


def _serve_head(then: str) -> list[bytes]:
    """A HEAD request answered; `then`, in the same turn as the answer: what the connection does next."""

    async def main() -> list[bytes]:
        transport = Transport()
        answered = asyncio.Event()

        async def app(scope: dict, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
            await send({"type": "http.response.body", "body": b""})
            connection = scope["extensions"]["kube.connection"]
            if then == "shutdown":  # the server's shutdown, its step after this one in the loop's turn
                connection.shutdown()
            else:  # the next request read before the turn's end: refused (two Host headers)
                connection.data_received(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
            answered.set()

        config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False)
        config.load()
        protocol = HardenedHTTPProtocol(config=config, server_state=ServerState(), app_state={})
        protocol.connection_made(transport)  # type: ignore[arg-type]
        protocol.data_received(b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n")
        await answered.wait()
        await asyncio.sleep(0)  # the turn's end
        protocol.connection_lost(None)
        return transport.writes

    return asyncio.run(main())


def test_a_held_head_is_written_before_the_servers_shutdown_closes_the_connection() -> None:
    writes = b"".join(_serve_head("shutdown"))
    assert writes.startswith(b"HTTP/1.1 200 OK\r\n"), writes


def test_a_held_head_is_written_before_a_refusal_of_the_next_request() -> None:
    writes = b"".join(_serve_head("refuse"))
    assert writes.startswith(b"HTTP/1.1 200 OK\r\n"), writes
    assert b"HTTP/1.1 400 Bad Request" in writes.split(b"\r\n\r\n", 1)[1], writes
