"""Several replicas on one storage, as an HA control plane runs them: three servers in this process on
one event loop share one SQLite KV (its file admits one opener; `new_config(shared_kv=...)` is the
injection point; the same tests are meant to run on etcd). Each replica has its identity Lease; the
`kubernetes` Service's endpoints list every live replica's advertise address (its /masterleases key);
one replica runs the embedded controllers, and they move when it stops.

The tests run in file order on one set of replicas: the later ones stop replicas."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import uvloop

from conftest import Server, wait_for
from kube_apiserver.apimachinery.wait import Periodic
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.cmd.server import create_server_chain, new_config
from kube_apiserver.controlplane.identitylease import (
    IDENTITY_LEASE_COMPONENT_LABEL_KEY,
    IdentityLeaseGarbageCollector,
    identity_lease_name,
)
from kube_apiserver.controlplane.reconcilers import MASTER_LEASES_PREFIX
from kube_apiserver.storage.etcd3.kv import EtcdKV
from kube_apiserver.storage.kv import prefix_end
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

ADDRESSES = ("192.0.2.10", "192.0.2.11", "192.0.2.12")  # only written into objects, never dialled
LEADER_ELECTION_FLAGS = [
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1s",
    "--leader-elect-retry-period=200ms",
]
ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
SLICE = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
CONTROLLER_LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"


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


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def replicas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicaSet]:
    etcd_servers = request.getfixturevalue("etcd").endpoints if request.param == "etcd" else ""
    group = ReplicaSet(str(tmp_path_factory.mktemp("replicas")), etcd_servers)
    try:
        group.start(3)
        yield group
    finally:
        group.close()


def live(group: ReplicaSet) -> list[Replica]:
    return [r for r in group.replicas if r.running]


def endpoint_addresses(replica: Replica) -> list[str]:
    response = replica.client.request("GET", ENDPOINTS)
    assert response.status == 200, response.body
    subsets = response.json().get("subsets") or []
    return [a["ip"] for a in subsets[0]["addresses"]] if subsets else []


def slice_addresses(replica: Replica) -> list[str]:
    response = replica.client.request("GET", SLICE)
    assert response.status == 200, response.body
    return [ip for endpoint in response.json().get("endpoints") or [] for ip in endpoint["addresses"]]


def test_each_replica_keeps_its_identity_lease(replicas: ReplicaSet):
    replica = replicas.replicas[0]
    selector = f"?labelSelector={IDENTITY_LEASE_COMPONENT_LABEL_KEY}%3Dkube-apiserver"
    response = replica.client.request(
        "GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases{selector}"
    )
    assert response.status == 200, response.body
    leases = {lease["metadata"]["name"]: lease for lease in response.json()["items"]}
    assert sorted(leases) == sorted(identity_lease_name(r.hostname) for r in replicas.replicas)
    for r in replicas.replicas:
        lease = leases[identity_lease_name(r.hostname)]
        assert lease["metadata"]["labels"] == {
            IDENTITY_LEASE_COMPONENT_LABEL_KEY: "kube-apiserver",
            "kubernetes.io/hostname": r.hostname,
        }
        assert lease["spec"]["holderIdentity"].startswith(identity_lease_name(r.hostname) + "_")
        assert lease["spec"]["leaseDurationSeconds"] == 3600
        assert lease["spec"]["renewTime"]


def identity_lease(name: str, renewed: datetime, labelled: bool = True) -> dict:
    labels = {IDENTITY_LEASE_COMPONENT_LABEL_KEY: "kube-apiserver"} if labelled else {}
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "holderIdentity": f"{name}_0",
            "leaseDurationSeconds": 3600,
            "renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        },
    }


def test_expired_identity_leases_are_collected(replicas: ReplicaSet):
    replica = replicas.replicas[0]
    leases_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    now = datetime.now(UTC)
    for lease in (
        identity_lease("apiserver-gone", now - timedelta(hours=2)),
        identity_lease("apiserver-alive", now - timedelta(minutes=59)),
        identity_lease("not-an-identity", now - timedelta(hours=2), labelled=False),
    ):
        assert replica.client.request("POST", leases_path, lease).status == 201
    store = replica.kube.restful.group_versions[("coordination.k8s.io", "v1")]["leases"].scope.storage
    replicas.call(IdentityLeaseGarbageCollector(store).collect())
    assert replica.client.request("GET", f"{leases_path}/apiserver-gone").status == 404
    assert replica.client.request("GET", f"{leases_path}/apiserver-alive").status == 200
    assert replica.client.request("GET", f"{leases_path}/not-an-identity").status == 200
    for r in replicas.replicas:  # the live replicas' own leases stay
        assert replica.client.request("GET", f"{leases_path}/{identity_lease_name(r.hostname)}").status == 200


def test_the_kubernetes_endpoints_list_every_live_replica(replicas: ReplicaSet):
    assert sorted(replicas.master_leases()) == sorted(ADDRESSES)
    for replica in replicas.replicas:
        wait_for(lambda replica=replica: endpoint_addresses(replica) == sorted(ADDRESSES), timeout=10)
        wait_for(lambda replica=replica: slice_addresses(replica) == sorted(ADDRESSES), timeout=10)


def test_one_replica_runs_the_controllers(replicas: ReplicaSet):
    leaders = wait_for(lambda: [r for r in replicas.replicas if r.leads()] or None, timeout=10)
    assert len(leaders) == 1
    lease = replicas.replicas[1].client.request("GET", CONTROLLER_LEASE).json()
    assert lease["spec"]["holderIdentity"].startswith(leaders[0].hostname + "_")
    assert lease["spec"]["leaseDurationSeconds"] == 2


def test_a_cleanly_stopped_leader_hands_over_and_leaves_the_endpoints_at_once(replicas: ReplicaSet):
    leader = next(r for r in replicas.replicas if r.leads())
    replicas.stop(leader)
    others = live(replicas)
    remaining = sorted(r.address for r in others)
    assert sorted(replicas.master_leases()) == remaining
    assert endpoint_addresses(others[0]) == remaining
    assert slice_addresses(others[0]) == remaining
    new_leader = wait_for(lambda: [r for r in others if r.leads()] or None, timeout=10)
    assert len(new_leader) == 1
    lease = others[0].client.request("GET", CONTROLLER_LEASE).json()
    assert lease["spec"]["holderIdentity"].startswith(new_leader[0].hostname + "_")
    assert lease["spec"]["leaseTransitions"] >= 1


def test_a_dead_replicas_address_leaves_the_endpoints_after_the_ttl_and_its_controllers_move(
    replicas: ReplicaSet,
):
    dead = wait_for(lambda: next((r for r in live(replicas) if r.leads()), None), timeout=10)
    survivor = next(r for r in live(replicas) if r is not dead)
    transitions = survivor.client.request("GET", CONTROLLER_LEASE).json()["spec"]["leaseTransitions"]
    replicas.stop_renewing_endpoints(dead)
    replicas.abandon_leadership(dead)
    lease = survivor.client.request("GET", CONTROLLER_LEASE).json()
    assert lease["spec"]["holderIdentity"].startswith(dead.hostname + "_")  # held until it expires
    wait_for(lambda: dead.address not in replicas.master_leases(), timeout=15)
    wait_for(lambda: endpoint_addresses(survivor) == [survivor.address], timeout=10)
    wait_for(lambda: slice_addresses(survivor) == [survivor.address], timeout=10)
    wait_for(survivor.leads, timeout=15)
    lease = survivor.client.request("GET", CONTROLLER_LEASE).json()
    assert lease["spec"]["holderIdentity"].startswith(survivor.hostname + "_")
    assert lease["spec"]["leaseTransitions"] == transitions + 1


def test_a_lone_sqlite_server_takes_over_its_crashed_predecessors_lease_at_once(tmp_path):
    """SQLite's data dir lock admits one process: a lease held by another identity is a dead one's, so
    the restarted server's controllers start without waiting out --leader-elect-lease-duration."""
    data_dir = str(tmp_path)
    Server(data_dir).start().stop()

    async def crash_record() -> None:
        kv = await SQLiteKV.open(data_dir)
        try:

            async def held(lease: dict) -> dict:
                return {
                    **lease,
                    "spec": {**lease["spec"], "holderIdentity": "crashed_1", "leaseDurationSeconds": 15},
                }

            await ObjectStore(kv).guaranteed_update(
                "/registry/leases/kube-system/kube-controller-manager", held
            )
        finally:
            await kv.close()

    asyncio.run(crash_record())
    restarted = Server(data_dir).start()
    try:
        lease = restarted.request("GET", CONTROLLER_LEASE).json()
        assert lease["spec"]["holderIdentity"] != "crashed_1"
        assert lease["spec"]["leaseTransitions"] == 1
    finally:
        restarted.stop()
