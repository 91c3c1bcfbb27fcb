"""ResourceQuota admission across replicas sharing one storage (SQLite or etcd): each replica's admission
charges the quota with a compare-and-swap on its resourceVersion and, on a conflict, reads the quota again
and checks again, so concurrent creates spread over the replicas never exceed the quota, and the quota's
status.used is the real count afterwards."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import Response, wait_for
from replicas import BACKENDS, ReplicaSet, replicas_on_param

NS = "/api/v1/namespaces"
CREATES = 30


@pytest.fixture(scope="module", params=BACKENDS)
def replicas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicaSet]:
    with replicas_on_param(request, tmp_path_factory, "quota-replicas", 3) as group:
        yield group


def quota_namespace(group: ReplicaSet, name: str, hard: dict[str, str], used: dict[str, str]) -> str:
    """A namespace with quota `q`, once every replica sees its status (admission refuses a quota whose
    usage is unknown)."""
    first = group.replicas[0].client
    assert first.request("POST", NS, {"metadata": {"name": name}}).status == 201
    base = f"{NS}/{name}"
    # The root CA publisher's configmap, there before the quota so that its count is settled.
    wait_for(lambda: first.request("GET", f"{base}/configmaps/kube-root-ca.crt").status == 200, timeout=20)
    quota = {"metadata": {"name": "q"}, "spec": {"hard": hard}}
    assert first.request("POST", f"{base}/resourcequotas", quota).status == 201
    for replica in group.replicas:
        wait_for(
            lambda replica=replica: (
                (replica.client.request("GET", f"{base}/resourcequotas/q").json().get("status") or {}).get(
                    "used"
                )
                == used
            ),
            timeout=20,
        )
    return base


def create_concurrently(group: ReplicaSet, base: str, resource: str, bodies: list[dict]) -> list[Response]:
    """Each body created through replica i % 3, all at once."""

    def create(indexed: tuple[int, dict]) -> Response:
        index, body = indexed
        client = group.replicas[index % len(group.replicas)].client
        return client.request("POST", f"{base}/{resource}", body)

    with ThreadPoolExecutor(CREATES) as pool:
        return list(pool.map(create, enumerate(bodies)))


def assert_quota_refusals(responses: list[Response], kind: str) -> None:
    for response in responses:
        if response.status == 201:
            continue
        assert response.status == 403, response.body
        body = response.json()
        assert body["reason"] == "Forbidden"
        name = body["details"]["name"]
        assert body["message"].startswith(f'{kind} "{name}" is forbidden: exceeded quota: q, requested: ')


def used_everywhere(group: ReplicaSet, base: str, used: dict[str, str]) -> None:
    for replica in group.replicas:
        wait_for(
            lambda replica=replica: (
                replica.client.request("GET", f"{base}/resourcequotas/q").json()["status"]["used"] == used
            ),
            timeout=20,
        )


def test_concurrent_configmap_creates_over_three_replicas_admit_exactly_the_quota(replicas: ReplicaSet):
    # kube-root-ca.crt and room for 10 more
    base = quota_namespace(
        replicas, "quota-configmaps", {"count/configmaps": "11"}, {"count/configmaps": "1"}
    )
    bodies = [{"metadata": {"name": f"cm-{i}"}, "data": {"i": str(i)}} for i in range(CREATES)]
    responses = create_concurrently(replicas, base, "configmaps", bodies)
    print("configmap creates:", Counter(r.status for r in responses))
    assert_quota_refusals(responses, "configmaps")
    assert sum(r.status == 201 for r in responses) == 10
    listed = replicas.replicas[1].client.request("GET", f"{base}/configmaps").json()["items"]
    assert len(listed) == 11
    quota = replicas.replicas[2].client.request("GET", f"{base}/resourcequotas/q").json()
    assert quota["status"]["used"] == {"count/configmaps": "11"}
    used_everywhere(replicas, base, {"count/configmaps": "11"})


def pod(name: str, cpu: str) -> dict:
    container = {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
    return {"metadata": {"name": name}, "spec": {"containers": [container]}}


def test_concurrent_pod_creates_over_three_replicas_stay_within_the_cpu_quota(replicas: ReplicaSet):
    base = quota_namespace(
        replicas, "quota-pods", {"requests.cpu": "1", "pods": "20"}, {"requests.cpu": "0", "pods": "0"}
    )
    responses = create_concurrently(replicas, base, "pods", [pod(f"p-{i}", "100m") for i in range(CREATES)])
    print("pod creates:", Counter(r.status for r in responses))
    assert_quota_refusals(responses, "pods")
    assert sum(r.status == 201 for r in responses) == 10
    listed = replicas.replicas[1].client.request("GET", f"{base}/pods").json()["items"]
    assert len(listed) == 10
    used_everywhere(replicas, base, {"requests.cpu": "1", "pods": "10"})
