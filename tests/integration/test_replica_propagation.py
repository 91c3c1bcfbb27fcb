"""What one replica registers, every replica serves: a CustomResourceDefinition created, given a new
version or deleted through replica 0 is served (create, list, watch, discovery) or gone on replicas 1 and
2; an APIService registered through replica 0 is proxied by every replica, and its Available condition
is the same everywhere and written only when it changes (the replicas never flap it). The delays are
printed (on this machine, well under a second), never asserted."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from test_aggregator import AS, GROUP, GV_PATH, VERSION, Backend, api_service, available, host_ip

from conftest import wait_for
from replicas import BACKENDS, Replica, ReplicaSet, replicas_on_param

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGET_GROUP = "propagation.example.com"
GADGETS = f"/apis/{GADGET_GROUP}/v1/namespaces/default/gadgets"
API_SERVICE = f"{VERSION}.{GROUP}"
RESYNC_SECONDS = 1.0  # how often each replica checks a remote APIService's availability again
AGGREGATED = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}


@pytest.fixture(scope="module", params=BACKENDS)
def replicas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicaSet]:
    with pytest.MonkeyPatch.context() as patch:  # remote availability rechecked every second
        patch.setattr("kube_apiserver.aggregator.lister.RESYNC_SECONDS", RESYNC_SECONDS)
        with replicas_on_param(request, tmp_path_factory, "propagation", 3) as group:
            yield group


def propagation(what: str, group: ReplicaSet, seen: Callable[[Replica], Any]) -> None:
    """Polls every replica at once until each sees it, and prints how long each took."""
    since = time.monotonic()

    def delay(replica: Replica) -> float:
        wait_for(lambda: seen(replica), timeout=20, interval=0.01)
        return time.monotonic() - since

    with ThreadPoolExecutor(len(group.replicas)) as pool:
        delays = list(pool.map(delay, group.replicas))
    print(
        f"\n{what}: "
        + ", ".join(f"{r.hostname} {d * 1000:.0f} ms" for r, d in zip(group.replicas, delays, strict=True))
    )


def gadget_crd(*versions: str) -> dict:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{GADGET_GROUP}"},
        "spec": {
            "group": GADGET_GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": v, "served": True, "storage": v == versions[0], "schema": schema} for v in versions
            ],
        },
    }


def gadget(name: str, version: str = "v1") -> dict:
    return {"apiVersion": f"{GADGET_GROUP}/{version}", "kind": "Gadget", "metadata": {"name": name}}


def discovered_versions(replica: Replica) -> list[str]:
    """The group's versions in the aggregated discovery of /apis, those with their resources listed, when
    the APIGroupList of /apis (from the local APIServices the CRD's versions get) lists the same."""
    doc = replica.client.request("GET", "/apis", headers=AGGREGATED).json()
    item = next((i for i in doc["items"] if i["metadata"]["name"] == GADGET_GROUP), None)
    versions = (item or {}).get("versions") or []
    listed = [
        v["version"] for v in versions if [r["resource"] for r in v.get("resources") or []] == ["gadgets"]
    ]
    groups = replica.client.request("GET", "/apis").json()["groups"]
    group = next((g for g in groups if g["name"] == GADGET_GROUP), {"versions": []})
    if sorted(v["version"] for v in group["versions"]) != sorted(listed):
        return ["(the two discovery documents differ)"]
    return sorted(listed)


def served(replica: Replica, version: str) -> bool:
    path = f"/apis/{GADGET_GROUP}/{version}"
    resources = replica.client.request("GET", path)
    return resources.status == 200 and [r["name"] for r in resources.json()["resources"]] == ["gadgets"]


def watch_events(replica: Replica, path: str, resource_version: str, count: int) -> list[tuple[str, str]]:
    """The first `count` events of a watch from `resource_version`: (type, name)."""
    client = replica.client
    conn = http.client.HTTPSConnection(
        "127.0.0.1", client.port, context=ssl.create_default_context(cafile=client.ca_file), timeout=20
    )
    query = f"?watch=true&resourceVersion={resource_version}&timeoutSeconds=20"
    conn.request("GET", path + query, headers={"Authorization": f"Bearer {client.token}"})
    response = conn.getresponse()
    assert response.status == 200, response.read()
    events = []
    while len(events) < count:
        event = json.loads(response.readline())
        events.append((event["type"], event["object"]["metadata"]["name"]))
    conn.close()
    return events


def test_a_crd_created_on_one_replica_is_served_by_every_replica(replicas: ReplicaSet):
    first, second, third = replicas.replicas
    assert first.client.request("POST", CRDS, gadget_crd("v1")).status == 201
    propagation("CRD served", replicas, lambda r: served(r, "v1") and discovered_versions(r) == ["v1"])
    for replica in replicas.replicas:
        created = replica.client.request("POST", GADGETS, gadget(f"from-{replica.hostname}"))
        assert created.status == 201, created.body
    listed = third.client.request("GET", GADGETS).json()
    names = sorted(item["metadata"]["name"] for item in listed["items"])
    assert names == sorted(f"from-{r.hostname}" for r in replicas.replicas)
    start = listed["metadata"]["resourceVersion"]
    assert second.client.request("POST", GADGETS, gadget("watched")).status == 201
    assert first.client.request("DELETE", f"{GADGETS}/watched").status == 200
    assert watch_events(third, GADGETS, start, 2) == [("ADDED", "watched"), ("DELETED", "watched")]


def test_a_new_version_is_served_by_every_replica(replicas: ReplicaSet):
    first = replicas.replicas[0]
    crd = first.client.request("GET", f"{CRDS}/gadgets.{GADGET_GROUP}").json()
    crd["spec"]["versions"] = gadget_crd("v1", "v2")["spec"]["versions"]
    assert first.client.request("PUT", f"{CRDS}/gadgets.{GADGET_GROUP}", crd).status == 200
    propagation(
        "CRD version served", replicas, lambda r: served(r, "v2") and discovered_versions(r) == ["v1", "v2"]
    )
    for replica in replicas.replicas:
        got = replica.client.request(
            "GET", f"/apis/{GADGET_GROUP}/v2/namespaces/default/gadgets/from-replica-0"
        )
        assert got.status == 200 and got.json()["apiVersion"] == f"{GADGET_GROUP}/v2"


def no_gadgets_served(replica: Replica) -> bool:
    """Whether the gadgets are gone; until then a list answers (a request that reached the resource while
    its CRD went away completes: it is not left waiting on a watch cache that stopped)."""
    listed = replica.client.request("GET", GADGETS)
    assert listed.status in (200, 404), listed.body
    return listed.status == 404 and discovered_versions(replica) == []


def test_a_deleted_crd_is_gone_from_every_replica(replicas: ReplicaSet):
    first = replicas.replicas[0]
    assert first.client.request("DELETE", f"{CRDS}/gadgets.{GADGET_GROUP}").status == 200
    # The finalizer deletes the gadgets first: this includes that work, not only the propagation.
    propagation("CRD deletion", replicas, no_gadgets_served)
    for replica in replicas.replicas:
        assert replica.client.request("GET", f"{CRDS}/gadgets.{GADGET_GROUP}").status == 404


# ---- an aggregated API server registered through one replica ----


@pytest.fixture(scope="module")
def backend(replicas: ReplicaSet) -> Iterator[Backend]:
    """The aggregated server, behind a selector-less Service and its Endpoints made through replica 0."""
    ip = host_ip()
    if ip is None:
        pytest.skip("this host has no non-loopback address for an Endpoints object")
    server = Backend()
    client = replicas.replicas[0].client
    service = {
        "metadata": {"name": "api", "namespace": "default"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": server.port}]},
    }
    endpoints = {
        "metadata": {"name": "api", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": server.port}]}],
    }
    assert client.request("POST", "/api/v1/namespaces/default/services", service).status == 201
    assert client.request("POST", "/api/v1/namespaces/default/endpoints", endpoints).status == 201
    yield server
    server.stop()


def availability(replica: Replica) -> tuple[str, str, str, str]:
    """(status, reason, lastTransitionTime, resourceVersion) of the APIService's Available condition."""
    got = replica.client.request("GET", f"{AS}/{API_SERVICE}").json()
    condition = available(replica.client, API_SERVICE)
    return (
        condition.get("status", ""),
        condition.get("reason", ""),
        condition.get("lastTransitionTime", ""),
        got["metadata"]["resourceVersion"],
    )


def consistent_availability(group: ReplicaSet, status: str) -> tuple[str, str, str, str]:
    """The condition once every replica serves the same one with this status, left unchanged for two
    resync periods: no replica writes it again (upstream writes it only when it changes)."""
    seen = wait_for(
        lambda: (
            len(set(views := [availability(r) for r in group.replicas])) == 1
            and views[0][0] == status
            and views[0]
        ),
        timeout=30,
    )
    time.sleep(2 * RESYNC_SECONDS)
    assert [availability(r) for r in group.replicas] == [seen] * len(group.replicas)
    return seen


def proxied(replica: Replica) -> bool:
    answer = replica.client.request("GET", f"{GV_PATH}/namespaces/default/flunders")
    return answer.status == 200 and [i["metadata"]["name"] for i in answer.json()["items"]] == ["one"]


def test_an_apiservice_registered_on_one_replica_is_proxied_by_every_replica(
    replicas: ReplicaSet, backend: Backend
):
    registration = api_service(
        API_SERVICE,
        service={"namespace": "default", "name": "api"},
        caBundle=base64.b64encode(backend.ca_pem).decode(),
        groupPriorityMinimum=1000,
        versionPriority=15,
    )
    assert replicas.replicas[0].client.request("POST", AS, registration).status == 201
    propagation("APIService proxied", replicas, proxied)
    status, reason, _, _ = consistent_availability(replicas, "True")
    assert reason == "Passed"


def test_an_unavailable_backend_is_unavailable_on_every_replica_without_flapping(
    replicas: ReplicaSet, backend: Backend
):
    backend.stop()
    _, reason, _, _ = consistent_availability(replicas, "False")
    assert reason == "FailedDiscoveryCheck"
    for replica in replicas.replicas:
        answer = replica.client.request("GET", f"{GV_PATH}/namespaces/default/flunders")
        assert (answer.status, answer.body) == (503, b"service unavailable\n")
