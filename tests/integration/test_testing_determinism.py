"""--deterministic (apimachinery/clock.py, cmd/testing_clock.py): two servers given the same writes record
the same bytes; the clock stands still at --deterministic-start until the test advances it, and the cluster's
timed work (a CronJob's schedule, a finished Job's TTL) happens only then. Without the flag nothing changes."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from kube_apiserver.testing import APIServer
from kube_apiserver.testing.clock import ClockError

START = "2025-01-01T00:00:00Z"
NS = "det"
QUIET = ["--controllers="]  # no controller writes meanwhile: resourceVersions follow the test's writes alone
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def _wait_for(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def _ok(
    server: APIServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> Any:
    response = server.request(method, path, body, headers)
    assert response.status < 300, (method, path, response.status, response.body)
    return response.json()


def _settled(server: APIServer) -> None:
    """The server's own writes after readiness (its service IP repair...) are done: the store's revision holds
    still for a while. resourceVersions follow the order of all writes, the server's included."""

    def revision() -> str:
        return _ok(server, "GET", "/api/v1/namespaces?limit=1")["metadata"]["resourceVersion"]

    last = revision()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = revision()
        if now == last:
            return
        last = now
    raise AssertionError("the server kept writing")


def _record(server: APIServer) -> dict[str, bytes]:
    """The same writes, then every object they made as the server answers a GET of it."""
    _settled(server)
    _ok(server, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    made = [f"/api/v1/namespaces/{NS}"]
    for _ in range(3):
        cm = _ok(
            server, "POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"generateName": "cfg-"}}
        )
        made.append(f"/api/v1/namespaces/{NS}/configmaps/{cm['metadata']['name']}")
    _ok(
        server,
        "POST",
        f"/api/v1/namespaces/{NS}/secrets",
        {"metadata": {"name": "s"}, "stringData": {"k": "v"}},
    )
    made.append(f"/api/v1/namespaces/{NS}/secrets/s")
    event = {
        "metadata": {"name": "e"},
        "eventTime": "2025-01-01T00:00:00.000000Z",
        "reportingController": "example.com/test",
        "reportingInstance": "test-1",
        "action": "Test",
        "reason": "Tested",
        "type": "Normal",
        "regarding": {"kind": "ConfigMap", "namespace": NS, "name": "applied", "apiVersion": "v1"},
    }
    _ok(server, "POST", f"/apis/events.k8s.io/v1/namespaces/{NS}/events", event)
    made.append(f"/apis/events.k8s.io/v1/namespaces/{NS}/events/e")
    applied = json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1"}}
    )
    _ok(server, "PATCH", f"/api/v1/namespaces/{NS}/configmaps/applied?fieldManager=test", applied, APPLY)
    made.append(f"/api/v1/namespaces/{NS}/configmaps/applied")
    return {path: server.request("GET", path).body for path in made}


def _uids(recorded: dict[str, bytes]) -> list[str]:
    return [json.loads(body)["metadata"]["uid"] for body in recorded.values()]


def test_two_servers_with_the_same_seed_record_the_same_bytes() -> None:
    with APIServer(args=QUIET, deterministic=True) as one:
        first = _record(one)
    with APIServer(args=QUIET, deterministic=True) as other:
        second = _record(other)
    assert first == second
    for body in first.values():
        meta = json.loads(body)["metadata"]
        assert meta["creationTimestamp"] == START
        assert {entry["time"] for entry in meta.get("managedFields") or []} <= {START}
    with APIServer(args=QUIET, deterministic=True, seed=1) as seeded_otherwise:
        third = _record(seeded_otherwise)
    assert not set(_uids(first)) & set(_uids(third))


def test_without_the_flag_uids_are_random_and_times_are_the_wall_s() -> None:
    with APIServer(args=QUIET) as one:
        first = _record(one)
        now = one.clock.now()
        assert not one.clock.deterministic
        with pytest.raises(ClockError, match="--deterministic") as refused:
            one.clock.advance(60)
        assert refused.value.status == 400
    with APIServer(args=QUIET) as other:
        second = _record(other)
    assert not set(_uids(first)) & set(_uids(second))
    wall = datetime.datetime.now(datetime.UTC)
    assert abs((wall - now).total_seconds()) < 600
    created = json.loads(first[f"/api/v1/namespaces/{NS}"])["metadata"]["creationTimestamp"]
    assert created != START


def test_the_clock_moves_when_the_test_says_and_new_objects_carry_its_time() -> None:
    with APIServer(args=[*QUIET, "--deterministic-start=2030-06-01T12:00:00Z"], deterministic=True) as server:
        assert server.clock.now() == datetime.datetime(2030, 6, 1, 12, tzinfo=datetime.UTC)
        time.sleep(1.1)  # wall time passes; the server's does not
        assert server.clock.advance(3600) == datetime.datetime(2030, 6, 1, 13, tzinfo=datetime.UTC)
        cm = _ok(server, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "later"}})
        assert cm["metadata"]["creationTimestamp"] == "2030-06-01T13:00:00Z"
        assert server.clock.set("2030-06-02T00:00:00Z").day == 2
        for body, message in (
            ({"advance": -1}, "does not go back"),
            ({"set": "2030-06-01T00:00:00Z"}, "does not go back"),
            ({"advance": "soon"}, "invalid duration"),
            ({"later": 1}, "must be"),
        ):
            response = server.request("POST", "/debug/testing/clock", body)
            assert response.status == 400 and message in response.json()["message"], response.body
        assert server.clock.now() == datetime.datetime(2030, 6, 2, tzinfo=datetime.UTC)


def test_the_clock_endpoint_is_not_served_without_testing_endpoints() -> None:
    with APIServer(args=QUIET, deterministic=True, testing_tools=False) as server:
        assert server.request("GET", "/debug/testing/clock").status == 404


def test_a_cronjob_runs_only_once_the_clock_passes_its_schedule() -> None:
    cron_job = {
        "metadata": {"name": "every5"},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                    }
                }
            },
        },
    }
    jobs = "/apis/batch/v1/namespaces/default/jobs"
    with APIServer(args=["--controllers=cronjob"], deterministic=True) as server:
        _ok(server, "POST", "/apis/batch/v1/namespaces/default/cronjobs", cron_job)
        time.sleep(1.0)  # the controller has seen it and waits for 00:05 on the server's clock
        assert _ok(server, "GET", jobs)["items"] == []
        server.clock.advance(4 * 60)
        time.sleep(0.5)
        assert _ok(server, "GET", jobs)["items"] == []
        server.clock.advance(61)
        [job] = _wait_for(lambda: _ok(server, "GET", jobs)["items"])
        scheduled = datetime.datetime(2025, 1, 1, 0, 5, tzinfo=datetime.UTC)
        assert job["metadata"]["name"] == f"every5-{int(scheduled.timestamp()) // 60}"
        assert job["metadata"]["creationTimestamp"] == "2025-01-01T00:05:01Z"


def _succeed_pod(server: APIServer, job: str) -> None:
    pods = f"/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io/job-name={job}"
    [pod] = _wait_for(lambda: _ok(server, "GET", pods)["items"])
    container = {
        "name": "c",
        "image": "busybox",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
    }
    status = {"status": {"phase": "Succeeded", "containerStatuses": [container]}}
    path = f"/api/v1/namespaces/default/pods/{pod['metadata']['name']}/status"
    _ok(server, "PATCH", path, json.dumps(status), {"Content-Type": "application/merge-patch+json"})


def test_a_finished_job_is_deleted_only_once_the_clock_passes_its_ttl() -> None:
    job = {
        "metadata": {"name": "short"},
        "spec": {
            "ttlSecondsAfterFinished": 60,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            },
        },
    }
    path = "/apis/batch/v1/namespaces/default/jobs/short"
    with APIServer(
        args=["--controllers=job,ttl-after-finished,serviceaccount"], deterministic=True
    ) as server:
        _ok(server, "POST", "/apis/batch/v1/namespaces/default/jobs", job)
        _succeed_pod(server, "short")
        _wait_for(lambda: _ok(server, "GET", path).get("status", {}).get("completionTime"))
        time.sleep(1.0)
        assert server.request("GET", path).status == 200  # finished, but no time has passed
        server.clock.advance(59)
        time.sleep(0.5)
        assert server.request("GET", path).status == 200
        server.clock.advance(2)
        _wait_for(lambda: server.request("GET", path).status == 404)
