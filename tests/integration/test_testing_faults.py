"""Fault injection and request history on the real server (--enable-testing-endpoints), seen through the
official kubernetes client: an injected 409, a dropped watch that watch.Watch re-establishes, a watch ended
by a 410, a storage write that fails after validation, seeded probabilities, and history queries. Without
the flag the endpoints are 404."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kube_apiserver.testing import faults, history

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config, watch  # noqa: E402

from conftest import Server  # noqa: E402

NS = "default"


@pytest.fixture(scope="module")
def testing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(str(tmp_path_factory.mktemp("apiserver")), args=["--enable-testing-endpoints"]).start()
    yield srv
    srv.stop()


@pytest.fixture
def srv(testing_server: Server) -> Iterator[Server]:
    yield testing_server
    faults.clear(testing_server)


@pytest.fixture(scope="module")
def core(testing_server: Server) -> Iterator[client.CoreV1Api]:
    api_client = config.new_client_from_config(testing_server.kubeconfig)
    yield client.CoreV1Api(api_client)
    api_client.close()


def configmap(name: str, **data: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data or None)


def test_an_injected_conflict_is_seen_by_the_client(srv: Server, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(NS, configmap("conflicted", a="1"))
    rule = faults.inject(srv, verb="update", resource="configmaps", name="conflicted", status=409, count=1)
    current = core.read_namespaced_config_map("conflicted", NS)
    current.data = {"a": "2"}
    with pytest.raises(client.ApiException) as err:
        core.replace_namespaced_config_map("conflicted", NS, current)
    assert err.value.status == 409
    assert '"reason":"Conflict"' in err.value.body
    assert "the object has been modified; please apply your changes" in err.value.body
    assert core.replace_namespaced_config_map("conflicted", NS, current).data == {"a": "2"}  # count used up
    assert faults.get(srv, rule)["applied"] == 1
    updates = history.requests(srv, verb="update", name="conflicted")
    assert updates.statuses() == [409, 200]


def test_a_dropped_watch_is_re_established_by_watch_watch(srv: Server, core: client.CoreV1Api) -> None:
    namespace = "drop-watch"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    for name in ("w1", "w2", "w3"):
        core.create_namespaced_config_map(namespace, configmap(name))
    mark = history.last_sequence(srv)
    faults.drop_watch(srv, after_events=1, resource="configmaps", namespace=namespace, count=1)
    seen = []
    w = watch.Watch()
    for event in w.stream(
        core.list_namespaced_config_map, namespace, resource_version=start, _request_timeout=20
    ):
        name = event["object"].metadata.name
        if name.startswith("w"):  # not the namespace's kube-root-ca.crt, made by its controller
            seen.append(name)
        if len(seen) == 3:
            w.stop()
            break
    assert seen == ["w1", "w2", "w3"]
    watches = history.requests(srv, since=mark, verb="watch", resource="configmaps", namespace=namespace)
    assert len(watches) == 2  # the first was dropped after one event, the second resumed after it


def test_a_410_ends_a_watch(srv: Server, core: client.CoreV1Api) -> None:
    faults.expire_watch(srv, resource="configmaps", namespace=NS, count=1)
    with pytest.raises(client.ApiException) as err:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, NS, timeout_seconds=10):
            pass
    assert err.value.status == 410
    assert "Expired: too old resource version" in str(err.value.reason)


def test_a_storage_write_failure_leaves_nothing_written(srv: Server, core: client.CoreV1Api) -> None:
    faults.fail_writes(srv, verb="create", resource="configmaps", count=2)
    invalid = configmap("Not_A_Valid_Name")
    with pytest.raises(client.ApiException) as rejected:
        core.create_namespaced_config_map(NS, invalid)
    assert rejected.value.status == 422  # validation runs before the commit
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map(NS, configmap("never-written"))
    assert err.value.status == 500
    assert '"message":"etcdserver: request timed out"' in err.value.body
    with pytest.raises(client.ApiException) as missing:
        core.read_namespaced_config_map("never-written", NS)
    assert missing.value.status == 404


def fired(srv: Server, seed: int) -> list[int]:
    with faults.injected(
        srv, verb="get", resource="namespaces", name=NS, status=500, probability=0.5, seed=seed
    ):
        return [srv.request("GET", f"/api/v1/namespaces/{NS}").status for _ in range(16)]


def test_a_probability_with_a_seed_is_reproducible(srv: Server) -> None:
    first = fired(srv, 11)
    assert first == fired(srv, 11)
    assert set(first) == {200, 500}
    assert faults.rules(srv) == []  # the context manager removed each


def test_a_429_has_retry_after_and_latency_alone_serves(srv: Server) -> None:
    faults.inject(srv, verb="list", resource="secrets", status=429, retry_after=7, count=1)
    resp = srv.request("GET", "/api/v1/namespaces/default/secrets")
    assert resp.status == 429 and resp.headers["retry-after"] == "7"
    assert resp.json()["reason"] == "TooManyRequests" and resp.json()["details"] == {"retryAfterSeconds": 7}
    faults.inject(srv, verb="list", resource="secrets", latency=0.01, count=1)
    assert srv.request("GET", "/api/v1/namespaces/default/secrets").status == 200


def test_a_bad_rule_is_a_400_status(srv: Server) -> None:
    resp = srv.request("POST", "/debug/testing/faults", {"status": 418})
    assert resp.status == 400
    assert resp.json()["reason"] == "BadRequest" and "status: must be one of" in resp.json()["message"]
    assert srv.request("POST", "/debug/testing/faults", b"{not json").status == 400
    assert srv.request("DELETE", "/debug/testing/faults/fault-999").status == 404
    with pytest.raises(faults.FaultError, match="400"):
        faults.inject(srv, watch="sideways")


def test_history_filters_and_assertions(srv: Server, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(NS, configmap("patched-once", a="1"))
    with history.recording(srv) as recorded:
        core.patch_namespaced_config_map("patched-once", NS, {"data": {"a": "2"}})
        core.read_namespaced_config_map("patched-once", NS)
        srv.request("GET", "/debug/testing/faults")  # not recorded
    mine = recorded.requests(user="admin", namespace=NS, name="patched-once")
    assert mine.verbs() == ["patch", "get"]
    patch = mine.one(verb="patch")
    assert patch.ok and patch.request_object() == {"data": {"a": "2"}}
    assert patch.response_object()["data"] == {"a": "2"}
    created = history.requests(srv, verb="create", resource="configmaps", name="patched-once")
    assert created.one().request_object()["metadata"]["name"] == "patched-once"
    assert not [r for r in history.requests(srv) if r.path.startswith("/debug/testing/")]
    history.clear(srv)
    assert history.requests(srv, user="admin", name="patched-once") == []
    assert srv.request("GET", "/debug/testing/requests?colour=red").status == 400


def test_the_endpoints_are_404_without_the_flag(server: Server) -> None:
    for path in ("/debug/testing/faults", "/debug/testing/faults/fault-1", "/debug/testing/requests"):
        assert server.request("GET", path).status == 404
    assert server.request("POST", "/debug/testing/faults", {"status": 500}).status == 404
