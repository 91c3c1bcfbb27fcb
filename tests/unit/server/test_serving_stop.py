"""Stopping the HTTP server: no fixed pause when no connection is open, and the serving loop wakes on request."""

from __future__ import annotations

import asyncio

import pytest
import uvicorn

from kube_apiserver.server import serving


def test_a_server_without_connections_stops_without_uvicorns_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    async def paused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("uvicorn's shutdown (a 0.1 s pause for open connections) with none open")

    monkeypatch.setattr(uvicorn.Server, "shutdown", paused)

    async def main() -> None:
        info = serving.SecureServingInfo("127.0.0.1", 0, "", "")
        config = uvicorn.Config(lambda *a: None, lifespan="off", log_config=None)
        config.load()
        server = serving._Server(config)
        server.lifespan = config.lifespan_class(config)
        sock = info.listen()
        await server.startup(sockets=[sock])
        await server.shutdown(sockets=[sock])
        assert sock.fileno() == -1  # closed

    asyncio.run(main())


def test_request_exit_wakes_the_serving_loop() -> None:
    async def main() -> int:
        server = serving._Server(uvicorn.Config(lambda *a: None, lifespan="off", log_config=None))
        ticks = 0

        async def on_tick(counter: int) -> bool:
            nonlocal ticks
            ticks += 1
            return server.should_exit

        server.on_tick = on_tick  # type: ignore[method-assign]
        loop = asyncio.ensure_future(server.main_loop())
        await asyncio.sleep(0)  # the loop is waiting
        server.request_exit()
        await asyncio.wait_for(loop, 5)
        return ticks

    assert asyncio.run(main()) == 2  # the first look, then one on the wake: no tick waited out
