"""The job controller against a real server (in-process, its loopback client), the test playing the
kubelet (pods/status patched to Succeeded or Failed with terminated containers): completions and
parallelism, Indexed Jobs, the tracking finalizer and uncountedTerminatedPods, backoffLimit,
activeDeadlineSeconds, podFailurePolicy, suspend, and the conditions and events upstream writes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.job import COMPONENT, JOB_TRACKING_FINALIZER, JobController
from kube_apiserver.controllers.job.indexes import format_indexes, parse_indexes
from kube_apiserver.controllers.job.policy import match_pod_failure_policy, match_success_policy

NS = "default"
CONTAINERS = [{"name": "main", "image": "busybox"}]


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, clock: FakeClock | None = None) -> AsyncIterator[ControllerCluster]:
    def controllers(c: ControllerCluster) -> list:
        return [
            JobController(
                c.client,
                c.informers,
                c.recorder(COMPONENT),
                clock=clock or FakeClock(),
                pod_failure_backoff=0.0,
            )
        ]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c


def _job(name: str, **spec: object) -> dict:
    template = {"spec": {"restartPolicy": "Never", "containers": CONTAINERS}}
    return {"metadata": {"name": name}, "spec": {"template": template, **spec}}


def _jobs(client):  # noqa: ANN001, ANN202
    return client.resource("batch", "v1", "jobs").namespace(NS)


def _pods(client):  # noqa: ANN001, ANN202
    return client.resource("", "v1", "pods").namespace(NS)


async def _job_pods(client, name: str, count: int | None = None, live: bool = True) -> list[dict] | None:  # noqa: ANN001
    items = (await _pods(client).list(labelSelector=f"batch.kubernetes.io/job-name={name}"))["items"]
    if live:
        items = [
            p
            for p in items
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp")
        ]
    return items if count is None or len(items) == count else None


async def _terminate(
    client, pod: dict, phase: str, exit_code: int = 0, conditions: list | None = None
) -> None:  # noqa: ANN001
    state = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error"}}
    status = {
        "phase": phase,
        "containerStatuses": [
            {
                "name": "main",
                "image": "busybox",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": state,
            }
        ],
    }
    if conditions:
        status["conditions"] = conditions
    await _pods(client).patch(pod["metadata"]["name"], {"status": status}, subresource="status")


async def _condition(client, name: str, kind: str) -> dict | None:  # noqa: ANN001
    job = await _jobs(client).get(name)
    found = [c for c in (job.get("status") or {}).get("conditions") or () if c["type"] == kind]
    return job if found and found[0]["status"] == "True" else None


def _conditions(job: dict) -> dict[str, tuple[str, str, str]]:
    return {
        c["type"]: (c["status"], c.get("reason", ""), c.get("message", ""))
        for c in job["status"]["conditions"]
    }


async def _events(c: ControllerCluster, name: str) -> list[tuple[str, str, str]]:
    await c.events.flush()
    items = (await c.client.resource("", "v1", "events").namespace(NS).list())["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name]


def test_a_job_runs_its_completions_and_completes(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            job = await _jobs(c.client).create(_job("pi", completions=3, parallelism=2))
            first = await eventually(lambda: _job_pods(c.client, "pi", 2))
            pod = first[0]
            assert pod["metadata"]["finalizers"] == [JOB_TRACKING_FINALIZER]
            assert pod["metadata"]["generateName"] == "pi-"
            assert pod["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
            status = await eventually(lambda: _status(c.client, "pi", active=2))
            assert status["uncountedTerminatedPods"] == {} and status["ready"] == 0 and "startTime" in status
            await _terminate(c.client, pod, "Succeeded")
            # Counted once its finalizer is gone, and a third pod replaces it (parallelism 2, 2 to go).
            await eventually(lambda: _status(c.client, "pi", succeeded=1, active=2))
            done = await _pods(c.client).get(pod["metadata"]["name"])
            assert not done["metadata"].get("finalizers")
            for p in await _job_pods(c.client, "pi"):
                await _terminate(c.client, p, "Succeeded")
            job = await eventually(lambda: _condition(c.client, "pi", "Complete"))
            status = job["status"]
            assert status["succeeded"] == 3 and not status.get("active") and status["completionTime"]
            conditions = _conditions(job)
            assert (
                conditions["SuccessCriteriaMet"]
                == conditions["Complete"]
                == ("True", "CompletionsReached", "Reached expected number of succeeded pods")
            )
            events = await _events(c, "pi")
            assert ("Normal", "Completed", "Job completed") in events
            assert sum(1 for e in events if e[1] == "SuccessfulCreate") == 3

    asyncio.run(main())


async def _status(client, name: str, **expected: object) -> dict | None:  # noqa: ANN001
    status = (await _jobs(client).get(name)).get("status") or {}
    return status if all(status.get(k) == v for k, v in expected.items()) else None


def test_failed_pods_are_replaced_until_the_backoff_limit(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            await _jobs(c.client).create(_job("flaky", backoffLimit=1))
            [pod] = await eventually(lambda: _job_pods(c.client, "flaky", 1))
            await _terminate(c.client, pod, "Failed", exit_code=1)
            [second] = await eventually(lambda: _replacement(c.client, "flaky", pod))
            await eventually(lambda: _status(c.client, "flaky", failed=1))
            await _terminate(c.client, second, "Failed", exit_code=1)
            job = await eventually(lambda: _condition(c.client, "flaky", "Failed"))
            message = "Job has reached the specified backoff limit"
            assert _conditions(job)["FailureTarget"] == ("True", "BackoffLimitExceeded", message)
            assert _conditions(job)["Failed"] == ("True", "BackoffLimitExceeded", message)
            assert job["status"]["failed"] == 2 and "completionTime" not in job["status"]
            assert ("Warning", "BackoffLimitExceeded", message) in await _events(c, "flaky")

    asyncio.run(main())


async def _replacement(client, name: str, old: dict) -> list[dict] | None:  # noqa: ANN001
    pods = await _job_pods(client, name, 1)
    return pods if pods and pods[0]["metadata"]["uid"] != old["metadata"]["uid"] else None


def test_an_indexed_job_gives_each_pod_its_index(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            await _jobs(c.client).create(_job("idx", completions=3, parallelism=3, completionMode="Indexed"))
            pods = await eventually(lambda: _job_pods(c.client, "idx", 3))
            by_index = {
                p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in pods
            }
            assert sorted(by_index) == ["0", "1", "2"]
            pod = by_index["1"]
            assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1"
            assert pod["metadata"]["generateName"] == "idx-1-" and pod["spec"]["hostname"] == "idx-1"
            env = pod["spec"]["containers"][0]["env"]
            assert env[0]["name"] == "JOB_COMPLETION_INDEX"
            assert "batch.kubernetes.io/job-completion-index" in env[0]["valueFrom"]["fieldRef"]["fieldPath"]
            await _terminate(c.client, pod, "Succeeded")
            await eventually(lambda: _status(c.client, "idx", completedIndexes="1", succeeded=1))
            # A failed index is retried with a pod of the same index.
            await _terminate(c.client, by_index["2"], "Failed", exit_code=3)
            retried = await eventually(lambda: _replacement_of_index(c.client, "idx", by_index["2"]))
            for p in (by_index["0"], retried):
                await _terminate(c.client, p, "Succeeded")
            job = await eventually(lambda: _condition(c.client, "idx", "Complete"))
            assert job["status"]["completedIndexes"] == "0-2" and job["status"]["succeeded"] == 3
            assert job["status"]["failed"] == 1

    asyncio.run(main())


async def _replacement_of_index(client, name: str, old: dict) -> dict | None:  # noqa: ANN001
    for pod in await _job_pods(client, name) or ():
        annotations = pod["metadata"]["annotations"]
        if (
            annotations["batch.kubernetes.io/job-completion-index"] == "2"
            and pod["metadata"]["uid"] != old["metadata"]["uid"]
        ):
            return pod
    return None


def test_pod_failure_policy_fail_job_and_ignore(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            policy = {
                "rules": [
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                    {
                        "action": "FailJob",
                        "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]},
                    },
                ]
            }
            await _jobs(c.client).create(_job("policy", backoffLimit=6, podFailurePolicy=policy))
            [pod] = await eventually(lambda: _job_pods(c.client, "policy", 1))
            disrupted = [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}]
            await _terminate(c.client, pod, "Failed", exit_code=137, conditions=disrupted)
            [second] = await eventually(lambda: _replacement(c.client, "policy", pod))
            assert not ((await _jobs(c.client).get("policy"))["status"].get("failed"))  # ignored: not counted
            await _terminate(c.client, second, "Failed", exit_code=42)
            job = await eventually(lambda: _condition(c.client, "policy", "Failed"))
            message = (
                f"Container main for pod default/{second['metadata']['name']} failed with exit code 42 "
                "matching FailJob rule at index 1"
            )
            assert _conditions(job)["Failed"] == ("True", "PodFailurePolicy", message)
            assert job["status"]["failed"] == 1

    asyncio.run(main())


def test_active_deadline_fails_the_job_and_deletes_its_pods(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock()
        async with cluster(tmp_path, clock) as c:
            await _jobs(c.client).create(_job("slow", activeDeadlineSeconds=30, parallelism=2, completions=4))
            await eventually(lambda: _job_pods(c.client, "slow", 2))
            clock.now += 31
            await _jobs(c.client).patch("slow", {"metadata": {"annotations": {"poke": "1"}}})
            job = await eventually(lambda: _condition(c.client, "slow", "Failed"))
            assert _conditions(job)["Failed"] == (
                "True",
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            )
            assert await eventually(lambda: _no_pods(c.client, "slow"))
            assert job["status"]["failed"] == 2  # the pods it deleted, counted failed

    asyncio.run(main())


async def _resumed(client, name: str) -> dict | None:  # noqa: ANN001
    job = await _jobs(client).get(name)
    return job if _conditions(job)["Suspended"][0] == "False" else None


async def _no_pods(client, name: str) -> bool:  # noqa: ANN001
    return not (await _job_pods(client, name, live=False))


def test_suspend_deletes_pods_and_resume_recreates_them(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            await _jobs(c.client).create(_job("sus", suspend=True))
            job = await eventually(lambda: _condition(c.client, "sus", "Suspended"))
            assert _conditions(job)["Suspended"] == ("True", "JobSuspended", "Job suspended")
            assert not await _job_pods(c.client, "sus") and "startTime" not in job["status"]
            await _jobs(c.client).patch("sus", {"spec": {"suspend": False}})
            await eventually(lambda: _job_pods(c.client, "sus", 1))
            job = await eventually(lambda: _resumed(c.client, "sus"))
            assert _conditions(job)["Suspended"] == ("False", "JobResumed", "Job resumed")
            await _jobs(c.client).patch("sus", {"spec": {"suspend": True}})
            await eventually(lambda: _no_pods(c.client, "sus"))
            job = await eventually(lambda: _condition(c.client, "sus", "Suspended"))
            assert not job["status"].get("failed")  # a pod deleted for the suspension is no failure
            events = await _events(c, "sus")
            assert ("Normal", "Suspended", "Job suspended") in events and (
                "Normal",
                "Resumed",
                "Job resumed",
            ) in events

    asyncio.run(main())


def test_a_deleted_jobs_pods_lose_the_tracking_finalizer(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            await _jobs(c.client).create(_job("gone"))
            [pod] = await eventually(lambda: _job_pods(c.client, "gone", 1))
            await _jobs(c.client).delete("gone", {"propagationPolicy": "Background"})
            await eventually(lambda: _without_finalizer(c.client, pod["metadata"]["name"]))

    asyncio.run(main())


async def _without_finalizer(client, name: str) -> bool:  # noqa: ANN001
    return not (await _pods(client).get(name))["metadata"].get("finalizers")


def test_completed_indexes_text() -> None:
    assert format_indexes([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert format_indexes([]) == ""
    assert parse_indexes("0-2,5,7-9", 9) == {0, 1, 2, 5, 7, 8}
    assert parse_indexes("", 3) == set()


def test_policy_matching() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "a", "state": {"terminated": {"exitCode": 0}}},
                {"name": "b", "state": {"terminated": {"exitCode": 5}}},
            ],
        },
    }
    not_in = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}}]}
    match = match_pod_failure_policy(not_in, pod)
    assert match.action == "FailJob"
    assert (
        match.message == "Container b for pod ns/p failed with exit code 5 matching FailJob rule at index 0"
    )
    only_zero = {
        "rules": [
            {"action": "FailJob", "onExitCodes": {"containerName": "a", "operator": "NotIn", "values": [1]}}
        ]
    }
    assert match_pod_failure_policy(only_zero, pod).action == "Count"  # exit code 0 never matches
    success = {"rules": [{"succeededIndexes": "0-2", "succeededCount": 2}, {"succeededCount": 4}]}
    assert match_success_policy(success, 10, {0, 5, 6}) == ""
    assert match_success_policy(success, 10, {0, 2}) == "Matched rules at index 0"
    assert match_success_policy(success, 10, {4, 5, 6, 7}) == "Matched rules at index 1"


def test_backoff_limit_per_index(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            spec = {
                "completions": 2,
                "parallelism": 2,
                "completionMode": "Indexed",
                "backoffLimitPerIndex": 1,
            }
            await _jobs(c.client).create(_job("per", **spec))
            pods = await eventually(lambda: _job_pods(c.client, "per", 2))
            by_index = {
                p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in pods
            }
            assert (
                by_index["0"]["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] == "0"
            )
            await _terminate(c.client, by_index["0"], "Failed", exit_code=1)
            retry = await eventually(lambda: _replacement_of(c.client, "per", "0", by_index["0"]))
            assert retry["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] == "1"
            await _terminate(c.client, retry, "Failed", exit_code=1)  # index 0 is out of retries
            await eventually(lambda: _status(c.client, "per", failedIndexes="0", failed=2))
            await _terminate(c.client, by_index["1"], "Succeeded")
            job = await eventually(lambda: _condition(c.client, "per", "Failed"))
            assert _conditions(job)["Failed"] == ("True", "FailedIndexes", "Job has failed indexes")
            assert job["status"]["completedIndexes"] == "1" and job["status"]["failedIndexes"] == "0"

    asyncio.run(main())


def test_a_fail_index_rule_and_max_failed_indexes(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [7]}}]}
            spec = {
                "completions": 3,
                "parallelism": 3,
                "completionMode": "Indexed",
                "backoffLimitPerIndex": 5,
                "maxFailedIndexes": 0,
                "podFailurePolicy": policy,
            }
            await _jobs(c.client).create(_job("maxed", **spec))
            pods = await eventually(lambda: _job_pods(c.client, "maxed", 3))
            await _terminate(c.client, pods[0], "Failed", exit_code=7)
            job = await eventually(lambda: _condition(c.client, "maxed", "Failed"))
            message = "Job has exceeded the specified maximal number of failed indexes"
            assert _conditions(job)["FailureTarget"] == ("True", "MaxFailedIndexesExceeded", message)
            # The two pods still running were deleted and count as failed too.
            assert job["status"]["failed"] == 3 and job["status"]["failedIndexes"] == "0"

    asyncio.run(main())


async def _replacement_of(client, name: str, index: str, old: dict) -> dict | None:  # noqa: ANN001
    for pod in await _job_pods(client, name) or ():
        annotations = pod["metadata"]["annotations"]
        if (
            annotations["batch.kubernetes.io/job-completion-index"] == index
            and pod["metadata"]["uid"] != old["metadata"]["uid"]
        ):
            return pod
    return None


def test_a_job_being_deleted_lets_its_pods_go(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            await _jobs(c.client).create(_job("fg", parallelism=2, completions=4))
            pods = await eventually(lambda: _job_pods(c.client, "fg", 2))
            # Foreground: the Job stays (no garbage collector runs here) with a deletionTimestamp.
            await _jobs(c.client).delete("fg", {"propagationPolicy": "Foreground"})
            for pod in pods:
                await eventually(lambda p=pod: _without_finalizer(c.client, p["metadata"]["name"]))
            await _terminate(c.client, pods[0], "Succeeded")
            await asyncio.sleep(0.2)
            assert len(await _job_pods(c.client, "fg", live=False)) == 2  # no replacement made

    asyncio.run(main())


def test_more_pods_succeeding_than_completions_is_reported() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.events: list[tuple[str, str, str]] = []

        def event(self, _obj: dict, kind: str, reason: str, message: str) -> None:
            self.events.append((kind, reason, message))

    class Informers:
        def for_resource(self, *_args: str) -> object:
            return object()

    async def make() -> JobController:  # its work queue wants a running loop
        return JobController(object(), Informers(), recorder)  # type: ignore[arg-type]

    recorder = Recorder()
    controller = asyncio.run(make())
    job = {"metadata": {"name": "many"}, "spec": {"completions": 2}}
    status = {"succeeded": 3}
    final = {"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    controller._finish(job, status, final)
    assert status["completionTime"] == "2026-01-01T00:00:00Z"
    message = "Too many succeeded pods running after completion count reached"
    assert recorder.events == [
        ("Warning", "TooManySucceededPods", message),
        ("Normal", "Completed", "Job completed"),
    ]


def test_a_success_policy_completes_the_job_early(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            spec = {
                "completions": 3,
                "parallelism": 3,
                "completionMode": "Indexed",
                "podReplacementPolicy": "Failed",  # the pods it deletes are not counted failed
                "successPolicy": {"rules": [{"succeededIndexes": "0"}]},
            }
            await _jobs(c.client).create(_job("leader", **spec))
            pods = await eventually(lambda: _job_pods(c.client, "leader", 3))
            leader = next(p for p in pods if p["metadata"]["annotations"][COMPLETION_INDEX_KEY] == "0")
            await _terminate(c.client, leader, "Succeeded")
            job = await eventually(lambda: _condition(c.client, "leader", "Complete"))
            reason = ("True", "SuccessPolicy", "Matched rules at index 0")
            assert _conditions(job)["SuccessCriteriaMet"] == reason and _conditions(job)["Complete"] == reason
            assert job["status"]["completedIndexes"] == "0" and not job["status"].get("failed")
            assert await eventually(lambda: _no_pods_but(c.client, "leader", leader["metadata"]["name"]))

    asyncio.run(main())


COMPLETION_INDEX_KEY = "batch.kubernetes.io/job-completion-index"


async def _no_pods_but(client, name: str, kept: str) -> bool:  # noqa: ANN001
    return [p["metadata"]["name"] for p in await _job_pods(client, name, live=False)] == [kept]
