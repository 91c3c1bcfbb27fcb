"""Several replicas on one storage, as an HA control plane runs them: three servers in this process on
one event loop share one SQLite KV (its file admits one opener; `new_config(shared_kv=...)` is the
injection point; the same tests are meant to run on etcd). Each replica has its identity Lease; the
`kubernetes` Service's endpoints list every live replica's advertise address (its /masterleases key);
one replica runs the embedded controllers, and they move when it stops.

The tests run in file order on one set of replicas: the later ones stop replicas."""

from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from conftest import Server, wait_for
from kube_apiserver.controlplane.identitylease import (
    IDENTITY_LEASE_COMPONENT_LABEL_KEY,
    IdentityLeaseGarbageCollector,
    identity_lease_name,
)
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV
from replicas import ADDRESSES, BACKENDS, Replica, ReplicaSet, replicas_on_param

ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
SLICE = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
CONTROLLER_LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"


@pytest.fixture(scope="module", params=BACKENDS)
def replicas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicaSet]:
    with replicas_on_param(request, tmp_path_factory, "replicas", 3) as group:
        yield group


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


def watch_events(replica: Replica, path: str, count: int, events: list[dict], ready: threading.Event) -> None:
    """`count` events of a raw watch stream on `path` (which names its resourceVersion)."""
    ctx = ssl.create_default_context(cafile=replica.client.ca_file)
    conn = http.client.HTTPSConnection("127.0.0.1", replica.client.port, context=ctx, timeout=30)
    conn.request("GET", path, headers={"Authorization": f"Bearer {replica.client.token}"})
    response = conn.getresponse()
    ready.set()
    try:
        while len(events) < count:
            line = response.readline()
            if not line:
                return
            events.append(json.loads(line))
    finally:
        conn.close()


def test_a_write_through_one_replica_is_read_and_watched_once_in_order_on_every_other(replicas: ReplicaSet):
    namespace = "default"
    configmaps = f"/api/v1/namespaces/{namespace}/configmaps"
    first = replicas.replicas[0].client.request("GET", configmaps)
    assert first.status == 200, first.body
    since = first.json()["metadata"]["resourceVersion"]
    count, seen, threads = 18, [], []
    for replica in replicas.replicas:
        events: list[dict] = []
        ready = threading.Event()
        watch = f"{configmaps}?watch=1&resourceVersion={since}&labelSelector=fanout%3Dyes"
        thread = threading.Thread(
            target=watch_events, args=(replica, watch, count, events, ready), daemon=True
        )
        thread.start()
        assert ready.wait(10)
        seen.append(events)
        threads.append(thread)
    created = []
    for i in range(count):
        writer, reader = replicas.replicas[i % 3], replicas.replicas[(i + 1) % 3]
        body = {"metadata": {"name": f"fanout-{i:02d}", "labels": {"fanout": "yes"}}, "data": {"i": str(i)}}
        response = writer.client.request("POST", configmaps, body)
        assert response.status == 201, response.body
        created.append(response.json()["metadata"]["resourceVersion"])
        got = reader.client.request(
            "GET", f"{configmaps}/fanout-{i:02d}"
        )  # read-your-writes on another replica
        assert got.status == 200 and got.json()["data"] == {"i": str(i)}, got.body
        listed = reader.client.request("GET", f"{configmaps}?labelSelector=fanout%3Dyes")  # a consistent list
        assert [item["metadata"]["name"] for item in listed.json()["items"]][-1:] == [f"fanout-{i:02d}"]
    for thread in threads:
        thread.join(20)
    for events in seen:  # every replica's watcher: each write once, in the order of the writes
        assert [e["type"] for e in events] == ["ADDED"] * count
        assert [e["object"]["metadata"]["resourceVersion"] for e in events] == created


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
