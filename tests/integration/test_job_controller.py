"""The job, cronjob and ttl-after-finished controllers in the real server, driven by kubectl (enabled
with the job, cronjob and ttl-after-finished controllers only). No node
runs the pods, so the test plays the kubelet: it marks a Job's pods Succeeded through pods/status, and
`kubectl wait --for=condition=complete` returns. A CronJob on `@every 1s` (a robfig/cron descriptor the
API accepts) gets its Job within seconds instead of the next minute."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Server, wait_for, with_controllers


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    args = [with_controllers("job", "cronjob", "ttl-after-finished")]
    server = Server(str(tmp_path_factory.mktemp("jobs")), args).start()
    yield server
    server.stop()


def _pods(srv: Server, job: str) -> list[dict]:
    out = srv.kubectl("get", "pods", "-l", f"batch.kubernetes.io/job-name={job}", "-o", "json").stdout
    return json.loads(out)["items"]


def _succeed(srv: Server, pod: dict) -> None:
    """What a kubelet writes when the pod's container exits 0."""
    terminated = {"exitCode": 0, "reason": "Completed"}
    container = {
        "name": pod["spec"]["containers"][0]["name"],
        "image": "busybox",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"terminated": terminated},
    }
    status = {"phase": "Succeeded", "containerStatuses": [container]}
    resp = srv.request(
        "PATCH",
        f"/api/v1/namespaces/default/pods/{pod['metadata']['name']}/status",
        json.dumps({"status": status}),
        {"Content-Type": "application/merge-patch+json"},
    )
    assert resp.status == 200, resp.body


def test_kubectl_wait_for_a_job_to_complete(srv: Server, kubectl_available: None) -> None:
    srv.kubectl("create", "job", "x", "--image=busybox")
    [pod] = wait_for(lambda: _pods(srv, "x"))
    assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    _succeed(srv, pod)
    proc = srv.kubectl("wait", "--for=condition=complete", "job/x", "--timeout=30s", timeout=60)
    assert proc.stdout.strip() == "job.batch/x condition met"
    job = json.loads(srv.kubectl("get", "job", "x", "-o", "json").stdout)
    assert job["status"]["succeeded"] == 1 and job["status"]["completionTime"]
    assert not json.loads(srv.kubectl("get", "pod", pod["metadata"]["name"], "-o", "json").stdout)[
        "metadata"
    ].get("finalizers")


def test_a_finished_job_with_a_ttl_is_deleted(srv: Server, kubectl_available: None) -> None:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "short"},
        "spec": {
            "ttlSecondsAfterFinished": 0,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            },
        },
    }
    srv.kubectl("create", "-f", "-", input_text=json.dumps(manifest))
    [pod] = wait_for(lambda: _pods(srv, "short"))
    _succeed(srv, pod)
    wait_for(lambda: srv.kubectl("get", "job", "short", check=False).returncode != 0)


def test_a_cronjob_creates_its_job(srv: Server, kubectl_available: None) -> None:
    srv.kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=@every 1s")
    jobs = wait_for(
        lambda: (
            json.loads(srv.kubectl("get", "jobs", "-o", "json").stdout)["items"]
            and [
                j
                for j in json.loads(srv.kubectl("get", "jobs", "-o", "json").stdout)["items"]
                if j["metadata"]["name"].startswith("tick-")
            ]
        )
    )
    job = jobs[0]
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert "batch.kubernetes.io/cronjob-scheduled-timestamp" in job["metadata"]["annotations"]
    cron_job = wait_for(lambda: _active(srv))
    assert cron_job["status"]["lastScheduleTime"]


def _active(srv: Server) -> dict | None:
    cron_job = json.loads(srv.kubectl("get", "cronjob", "tick", "-o", "json").stdout)
    return cron_job if (cron_job.get("status") or {}).get("active") else None


def test_a_job_runs_to_completion_on_simulated_nodes(
    tmp_path_factory: pytest.TempPathFactory, kubectl_available: None
) -> None:
    """With the scheduler and a simulated node (no test kubelet), the pod is bound, runs, exits 0, and the
    Job completes."""
    args = [
        "--controllers=*,job,scheduler,node-simulator,nodelifecycle,podgc",
        "--simulated-nodes=1",
        "--simulated-pod-run-duration=0.5s",
    ]
    server = Server(str(tmp_path_factory.mktemp("simjobs")), args).start()
    try:
        server.kubectl("create", "job", "sim", "--image=busybox")
        proc = server.kubectl("wait", "--for=condition=complete", "job/sim", "--timeout=30s", timeout=60)
        assert proc.stdout.strip() == "job.batch/sim condition met"
        [pod] = _pods(server, "sim")
        assert pod["spec"]["nodeName"] == "sim-node-0" and pod["status"]["phase"] == "Succeeded"
    finally:
        server.stop()
