"""A real server built in the test's own event loop (config, server chain, post-start hooks) and reached
only through its loopback client: no socket."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.cmd.server import ServerConfig, create_server_chain, new_config
from kube_apiserver.server.generic_api_server import GenericAPIServer


@dataclass
class InProcess:
    config: ServerConfig
    server: GenericAPIServer

    @property
    def client(self):  # noqa: ANN201 - the loopback Client
        assert self.config.loopback is not None
        return self.config.loopback


@contextlib.asynccontextmanager
async def in_process_server(data_dir: str, *args: str) -> AsyncIterator[InProcess]:
    opts = ServerRunOptions.parse(["--data-dir", data_dir, "--secure-port", "6443", "--controllers=", *args])
    completed = opts.complete()
    assert not completed.validate()
    config = await new_config(completed)
    server = create_server_chain(config)
    server.prepare_run()
    try:
        yield InProcess(config, server)
    finally:
        await server.hooks.run_pre_shutdown_hooks()
        config.generic.lifecycle.stopping.set()
        await asyncio.sleep(0)
        for destroy in config.generic.destroy_functions:
            await destroy()


async def eventually(check, timeout: float = 15.0):  # noqa: ANN001, ANN201
    """Until `check()` (a coroutine function) returns something truthy, which is returned."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = await check()
        if result:
            return result
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)
