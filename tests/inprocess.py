"""A real server built in the test's own event loop (config, server chain, post-start hooks) and reached
only through its loopback client: no socket."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from kube_apiserver.client.informers import SharedInformerFactory
from kube_apiserver.client.record import EventBroadcaster, EventRecorder, EventSource
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


async def mark_pod(client, namespace: str, name: str, phase: str = "Running") -> None:  # noqa: ANN001
    """Writes the pod's phase through pods/status, as a kubelet would; a Running pod is also Ready."""
    status: dict = {"phase": phase}
    if phase == "Running":
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    pods = client.resource("", "v1", "pods").namespace(namespace)
    await pods.patch(name, {"status": status}, subresource="status")


@contextlib.asynccontextmanager
async def repeating(step: Callable[[], Awaitable[None]], interval: float = 0.02) -> AsyncIterator[None]:
    """Awaits `step` every `interval` seconds in a task until the block ends (a test playing a kubelet or
    a scheduler)."""

    async def run() -> None:
        while True:
            await step()
            await asyncio.sleep(interval)

    task = asyncio.get_running_loop().create_task(run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@dataclass
class ControllerCluster:
    """An in-process server with a namespace and its default ServiceAccount, and the informer factory and
    event broadcaster its controllers share (as the controller manager gives them)."""

    client: object
    informers: SharedInformerFactory
    events: EventBroadcaster

    def recorder(self, component: str) -> EventRecorder:
        return self.events.new_recorder(EventSource(component))


@contextlib.asynccontextmanager
async def controller_cluster(
    data_dir: str, make_controllers: Callable[[ControllerCluster], list], namespace: str = "default"
) -> AsyncIterator[ControllerCluster]:
    """A server running the controllers `make_controllers` builds from the cluster's shared parts; they
    are stopped, then the informers and the broadcaster, on exit."""
    async with in_process_server(data_dir) as srv:
        client = srv.client
        await client.resource("", "v1", "namespaces").create({"metadata": {"name": namespace}})
        await client.resource("", "v1", "serviceaccounts").namespace(namespace).create(
            {"metadata": {"name": "default"}}
        )
        cluster = ControllerCluster(client, SharedInformerFactory(client), EventBroadcaster(client))
        cluster.events.start()
        controllers = make_controllers(cluster)
        for controller in controllers:
            await controller.start()
        try:
            yield cluster
        finally:
            for controller in controllers:
                await controller.stop()
            await cluster.informers.stop()
            await cluster.events.stop()
