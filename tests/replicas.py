"""Several API server replicas in this process, on one event loop in a thread of their own, sharing one
storage as an HA control plane does: one SQLite KV (its file admits one opener; `new_config(shared_kv=...)`
is the injection point) or one etcd, each replica with its own etcd client. Tests drive each replica
through its `client` (conftest's Server request helper)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pytest
import uvloop

from conftest import Server
from kube_apiserver.apimachinery.wait import Periodic
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.cmd.server import create_server_chain, new_config
from kube_apiserver.controlplane.reconcilers import MASTER_LEASES_PREFIX
from kube_apiserver.storage.etcd3.kv import EtcdKV
from kube_apiserver.storage.kv import prefix_end
from kube_apiserver.storage.sqlite import SQLiteKV

ADDRESSES = ("192.0.2.10", "192.0.2.11", "192.0.2.12")  # only written into objects, never dialled
LEADER_ELECTION_FLAGS = [
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1s",
    "--leader-elect-retry-period=200ms",
]


@dataclass
class Replica:
    client: Server  # its request() helper, pointed at this replica
    hostname: str
    address: str
    chain: Any
    stop: asyncio.Event
    task: asyncio.Future

    @property
    def kube(self) -> Any:
        return self.chain.delegate  # aggregator -> kube-apiserver

    @property
    def running(self) -> bool:
        return not self.task.done()

    def leads(self) -> bool:
        return bool(self.kube.controllers.running)


class ReplicaSet:
    """Replicas on one loop in a thread of their own, sharing the KV the set owns."""

    def __init__(self, root: str, etcd_servers: str = ""):
        """`etcd_servers`: each replica opens its own client to this etcd (--storage-backend=etcd3) and
        the set's KV only reads it; without it the replicas share the set's SQLite KV."""
        self.root = root
        self.etcd_servers = etcd_servers
        self.loop = uvloop.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.kv: Any = None
        self.expiry: Periodic | None = None
        self.replicas: list[Replica] = []

    def call(self, coro: Any, timeout: float = 60) -> Any:
        future: Future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    async def _open(self) -> None:
        if self.etcd_servers:
            self.kv = await EtcdKV.open(self.etcd_servers.split(","))
            return  # etcd expires its own leases
        self.kv = await SQLiteKV.open(f"{self.root}/shared")
        self.expiry = Periodic("lease expiry", 0.2, self.kv.expire_leases)
        self.expiry.start()

    async def _start(self, index: int) -> Replica:
        data_dir = f"{self.root}/replica-{index}"
        opts = ServerRunOptions.parse(
            [
                "--data-dir",
                data_dir,
                "--secure-port",
                "6443",
                "--bind-address",
                "127.0.0.1",
                f"--advertise-address={ADDRESSES[index]}",
                *LEADER_ELECTION_FLAGS,
                *(
                    ["--storage-backend=etcd3", f"--etcd-servers={self.etcd_servers}"]
                    if self.etcd_servers
                    else []
                ),
            ]
        )
        completed = opts.complete()
        assert not completed.validate()
        completed.secure_serving.bind_port = 0  # an ephemeral port, as the conftest server
        config = await new_config(completed, shared_kv=None if self.etcd_servers else self.kv)
        config.extra.hostname = f"replica-{index}"
        config.extra.endpoint_reconciler_ttl = 2.0  # kube-apiserver's 15s and 10s, shortened
        config.extra.endpoint_reconciler_interval = 0.3
        chain = create_server_chain(config)
        stop, ready = asyncio.Event(), asyncio.Event()
        task = asyncio.ensure_future(chain.prepare_run().run(config.serving, stop, ready))
        await asyncio.wait({task, asyncio.ensure_future(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()
        client = Server(
            data_dir, port=config.serving.port, token=config.admin_token, ca_file=completed.ca_file
        )
        return Replica(client, config.extra.hostname, ADDRESSES[index], chain, stop, task)

    def start(self, count: int) -> None:
        self.call(self._open())
        for index in range(count):
            self.replicas.append(self.call(self._start(index)))
        for replica in self.replicas:
            replica.client.wait_ready()

    async def _stop(self, replica: Replica) -> None:
        replica.stop.set()
        await replica.task

    def stop(self, replica: Replica) -> None:
        self.call(self._stop(replica))

    def stop_renewing_endpoints(self, replica: Replica) -> None:
        """As if the replica had died: its /masterleases key is no longer renewed, nor removed."""
        self.call(replica.kube.kubernetes_service.stop_reconciling())

    def abandon_leadership(self, replica: Replica) -> None:
        """As if the replica had died while leading: its controllers stop, its Lease stays held, unrenewed."""
        manager = replica.kube.controllers
        manager.elector.release_on_cancel = False
        self.call(manager.stop())

    def master_leases(self) -> list[str]:
        async def keys() -> list[str]:
            listed = await self.kv.range(MASTER_LEASES_PREFIX, prefix_end(MASTER_LEASES_PREFIX))
            return [kv.key.removeprefix(MASTER_LEASES_PREFIX) for kv in listed.kvs]

        return self.call(keys())

    def close(self) -> None:
        for replica in self.replicas:
            if replica.running:
                self.stop(replica)
        if self.expiry is not None:
            self.call(self.expiry.stop())
        if self.kv is not None:
            self.call(self.kv.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def replica_set(root: str, count: int, etcd_servers: str = "") -> ReplicaSet:
    """`count` replicas started and ready; the caller closes the set."""
    group = ReplicaSet(root, etcd_servers)
    try:
        group.start(count)
    except BaseException:
        group.close()
        raise
    return group


BACKENDS = ["sqlite", "etcd"]


@contextlib.contextmanager
def replicas_on_param(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str, count: int
) -> Iterator[ReplicaSet]:
    """`count` replicas on the backend a fixture parametrized with BACKENDS names (for "etcd", the `etcd`
    fixture's member), closed when the block ends."""
    etcd_servers = request.getfixturevalue("etcd").endpoints if request.param == "etcd" else ""
    group = replica_set(str(tmp_path_factory.mktemp(name)), count, etcd_servers)
    try:
        yield group
    finally:
        group.close()
