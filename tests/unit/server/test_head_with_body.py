"""A response's head leaves with its body in one write (one TLS record), or alone at the end of the loop's turn
when no body follows in it (a watch's head, a HEAD request); nothing written after it can overtake it."""

from __future__ import annotations

import asyncio

from kube_apiserver.server.httpprotocol import HeadWithBody


class Recorder:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def test_the_head_and_the_body_are_one_write() -> None:
    async def main() -> list[bytes]:
        transport = Recorder()
        cycle_transport = HeadWithBody(transport)  # type: ignore[arg-type]
        cycle_transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        cycle_transport.write(b"{}")
        await asyncio.sleep(0)
        return transport.writes

    assert asyncio.run(main()) == [b"HTTP/1.1 200 OK\r\n\r\n{}"]


def test_a_head_without_a_body_in_the_same_turn_leaves_at_its_end_and_before_what_follows() -> None:
    async def main() -> tuple[list[bytes], list[bytes]]:
        transport = Recorder()
        cycle_transport = HeadWithBody(transport)  # type: ignore[arg-type]
        cycle_transport.write(b"head")
        await asyncio.sleep(0)
        after_turn = list(transport.writes)
        cycle_transport.write(b"chunk")
        return after_turn, transport.writes

    after_turn, writes = asyncio.run(main())
    assert after_turn == [b"head"] and writes == [b"head", b"chunk"]


def test_close_writes_a_held_head_first_and_the_rest_is_the_transports() -> None:
    async def main() -> Recorder:
        transport = Recorder()
        cycle_transport = HeadWithBody(transport)  # type: ignore[arg-type]
        cycle_transport.write(b"head")
        assert cycle_transport.get_extra_info("peername") == "info:peername"
        cycle_transport.close()
        await asyncio.sleep(0)
        return transport

    transport = asyncio.run(main())
    assert transport.writes == [b"head"] and transport.closed


def test_a_big_body_is_not_copied_to_go_with_its_head() -> None:
    from kube_apiserver.server.httpprotocol import JOIN_LIMIT

    async def main() -> list[bytes]:
        transport = Recorder()
        cycle_transport = HeadWithBody(transport)  # type: ignore[arg-type]
        body = b"x" * (JOIN_LIMIT + 1)
        cycle_transport.write(b"head")
        cycle_transport.write(body)
        await asyncio.sleep(0)
        return transport.writes

    writes = asyncio.run(main())
    assert writes[0] == b"head" and len(writes) == 2 and len(writes[1]) == JOIN_LIMIT + 1
