"""Service allocations across replicas on one storage (SQLite, and etcd when installed): node ports come
from the stored RangeAllocation with compare-and-swap writes, so no two replicas hand out one port;
cluster IPs from IPAddress objects; each replica's repair leaves alone what another replica holds for a
Service it has not written yet (an IPAddress within its grace, a port within its leak count).

The tests run in file order on one set of replicas: the last one starts a third replica."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kube_apiserver.api.core.service.portallocator import NODE_PORTS_KEY, PortSet
from kube_apiserver.api.core.service.repair import NUM_REPAIRS_BEFORE_LEAK_CLEANUP
from kube_apiserver.storage.codec import decode_value
from replicas import BACKENDS, Replica, ReplicaSet, replica_set, replicas_on_param

SVCS = "/api/v1/namespaces/default/services"
IPS = "/apis/networking.k8s.io/v1/ipaddresses"


@pytest.fixture(scope="module", params=BACKENDS)
def replicas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicaSet]:
    with replicas_on_param(request, tmp_path_factory, "allocators", 2) as group:
        yield group


def node_port_service(name: str, node_port: int = 0) -> dict[str, Any]:
    port: dict[str, Any] = {"port": 80, "nodePort": node_port} if node_port else {"port": 80}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"type": "NodePort", "selector": {"app": name}, "ports": [port]},
    }


def create(replica: Replica, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = replica.client.request("POST", SVCS, body)
    return response.status, response.json()


def free_static_cluster_ip(replica: Replica) -> str:
    """An address of the lower, static part of 10.0.0.0/24 that no Service holds (dynamic allocation starts
    above it; the etcd is shared with other tests' Services)."""
    services = replica.client.request("GET", "/api/v1/services").json()["items"]
    taken = {ip for svc in services for ip in svc["spec"].get("clusterIPs") or []}
    return next(ip for ip in (f"10.0.0.{n}" for n in range(2, 16)) if ip not in taken)


def stored_node_ports(group: ReplicaSet) -> list[int]:
    stored = group.call(group.kv.get(NODE_PORTS_KEY))
    return PortSet.from_snapshot(decode_value(stored.value)).ports()


def repairs(replica: Replica) -> Any:
    return replica.kube.service_repair


def test_services_created_at_once_through_every_replica_get_distinct_node_ports_and_ips(replicas: ReplicaSet):
    names = [f"burst-{i}" for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(
                lambda i: create(replicas.replicas[i % 2], node_port_service(names[i])), range(len(names))
            )
        )
    assert [status for status, _ in results] == [201] * len(names), [body for _, body in results]
    node_ports = [svc["spec"]["ports"][0]["nodePort"] for _, svc in results]
    cluster_ips = [svc["spec"]["clusterIP"] for _, svc in results]
    assert len(set(node_ports)) == len(names)
    assert len(set(cluster_ips)) == len(names)
    assert set(node_ports) <= set(stored_node_ports(replicas))


def test_a_node_port_taken_through_one_replica_is_refused_by_the_other(replicas: ReplicaSet):
    first, second = replicas.replicas
    assert create(first, node_port_service("static-a", 30050))[0] == 201
    status, refused = create(second, node_port_service("static-b", 30050))
    assert status == 422, refused
    assert refused["message"] == (
        'Service "static-b" is invalid: spec.ports[0].nodePort: Invalid value: 30050: '
        "provided port is already allocated"
    )


def test_a_deleted_services_node_port_is_free_for_another_replica(replicas: ReplicaSet):
    first, second = replicas.replicas
    assert create(first, node_port_service("freed-a", 30060))[0] == 201
    assert create(second, node_port_service("freed-b", 30060))[0] == 422
    assert first.client.request("DELETE", f"{SVCS}/freed-a").status == 200
    status, taken = create(second, node_port_service("freed-b", 30060))
    assert status == 201, taken
    assert create(first, node_port_service("freed-c", 30060))[0] == 422
    assert 30060 in stored_node_ports(replicas)


def test_a_node_port_held_by_a_create_in_flight_survives_the_other_replicas_repairs(replicas: ReplicaSet):
    first, second = replicas.replicas
    replicas.call(first.kube.service_repair.node_ports.ports.allocate(30070))  # its Service not written yet
    for _ in range(NUM_REPAIRS_BEFORE_LEAK_CLEANUP - 1):
        replicas.call(repairs(first).node_ports.run_once())
        replicas.call(
            repairs(second).node_ports.run_once()
        )  # both replicas' repairs, neither undoing the other
        assert 30070 in stored_node_ports(replicas)
    assert create(second, node_port_service("in-flight", 30070))[0] == 422
    replicas.call(repairs(second).node_ports.run_once())  # the third time it sees no Service with it
    assert 30070 not in stored_node_ports(replicas)
    assert create(second, node_port_service("in-flight", 30070))[0] == 201
    listed = second.client.request("GET", SVCS).json()["items"]
    in_use = {port["nodePort"] for svc in listed for port in svc["spec"]["ports"] if port.get("nodePort")}
    assert in_use <= set(stored_node_ports(replicas))  # every Service's port kept through the repairs


def test_an_ip_address_allocated_for_an_unwritten_service_survives_another_replicas_repair(
    replicas: ReplicaSet,
):
    first = replicas.replicas[0]
    unwritten = {"metadata": {"namespace": "default", "name": "unwritten"}}
    ip = free_static_cluster_ip(first)  # not in the dynamic range earlier tests' Services were given IPs from
    replicas.call(repairs(first).cluster_ips.ips.allocate(ip, unwritten, False))
    third = replicas.call(replicas._start(2))  # its repair runs at start, as a replica's restart
    replicas.replicas.append(third)
    third.client.wait_ready()
    assert first.client.request("GET", f"{IPS}/{ip}").status == 200
    replicas.call(repairs(third).cluster_ips.run_once())
    assert first.client.request("GET", f"{IPS}/{ip}").status == 200
    repairs(third).cluster_ips.clock = lambda: time.time() + 61  # past repairip.go's 60 s grace
    replicas.call(repairs(third).cluster_ips.run_once())
    assert first.client.request("GET", f"{IPS}/{ip}").status == 404
    assert create(third, node_port_service("after-restart"))[0] == 201


# ---- with the reference kube-apiserver v1.20.2 on the same etcd ----


@pytest.fixture
def with_reference(etcd: Any, tmp_path: Any) -> Iterator[tuple[ReplicaSet, Any]]:
    """This server and kube-apiserver v1.20.2 (test_reference_interop's) on one etcd."""
    import test_reference_interop as interop

    if not interop.KUBE_APISERVER.exists():
        pytest.skip("the reference kube-apiserver (../shared/reference/build.sh) is not built")
    ours = replica_set(str(tmp_path / "ours"), 1, etcd.endpoints)
    try:
        reference = interop.start_reference(tmp_path / "reference", etcd.endpoints)
        try:
            yield ours, reference
        finally:
            interop.stop_reference(reference)
    finally:
        ours.close()


def test_the_reference_kube_apiserver_and_this_server_share_the_node_port_bitmap(with_reference):
    group, reference = with_reference
    ours = group.replicas[0]
    prefix = "interop"  # names no other test of the shared etcd uses
    assert create(ours, node_port_service(f"{prefix}-ours", 30080))[0] == 201
    theirs = node_port_service(f"{prefix}-theirs", 30080)
    # its v1.20 cluster IP bitmap does not know our IPAddresses: an IP no Service of the shared etcd holds
    theirs["spec"]["clusterIP"] = free_static_cluster_ip(ours)
    status, refused = reference.request("POST", SVCS, theirs)
    assert status == 422 and refused["message"].endswith("30080: provided port is already allocated"), refused
    theirs["spec"]["ports"][0]["nodePort"] = 30081
    status, created = reference.request("POST", SVCS, theirs)
    assert status == 201, created
    assert group.call(group.kv.get(NODE_PORTS_KEY)).value.startswith(b"k8s\x00")  # its protobuf, read here
    assert {30080, 30081} <= set(stored_node_ports(group))
    status, refused = create(ours, node_port_service(f"{prefix}-again", 30081))
    assert status == 422 and refused["message"].endswith("30081: provided port is already allocated"), refused
    assert reference.request("DELETE", f"{SVCS}/{prefix}-theirs")[0] == 200
    assert create(ours, node_port_service(f"{prefix}-again", 30081))[0] == 201
