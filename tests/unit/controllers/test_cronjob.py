"""The cronjob controller against a real server (in-process) with a fake clock, and its cron schedules:
a Job per scheduled time with a deterministic name and the scheduled-timestamp annotation, the active
list, lastScheduleTime and lastSuccessfulTime, concurrencyPolicy Forbid and Replace, history limits,
suspend, too many missed start times."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.controller_utils import parse_time
from kube_apiserver.controllers.cronjob import COMPONENT, CronJobController
from kube_apiserver.controllers.cronjob.schedule import parse

NS = "default"
UTC = datetime.UTC


def _at(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        ("*/15 * * * *", "2026-03-01T10:07:00", "2026-03-01T10:15:00"),
        ("*/15 * * * *", "2026-03-01T10:15:00", "2026-03-01T10:30:00"),  # strictly after
        ("0 9 * * mon-fri", "2026-03-06T09:30:00", "2026-03-09T09:00:00"),  # Friday, then Monday
        ("@hourly", "2026-03-01T10:59:59", "2026-03-01T11:00:00"),
        ("@monthly", "2026-12-15T00:00:00", "2027-01-01T00:00:00"),
        ("@weekly", "2026-03-01T00:00:00", "2026-03-08T00:00:00"),  # 1 March 2026 is a Sunday
        ("0 0 13 * 5", "2026-03-01T00:00:00", "2026-03-06T00:00:00"),  # day of month OR Friday
        ("0 0 * * 5", "2026-03-01T00:00:00", "2026-03-06T00:00:00"),
        ("5-10/5 1 * jan *", "2026-03-01T00:00:00", "2027-01-01T01:05:00"),
        ("@every 90s", "2026-03-01T00:00:00.500000", "2026-03-01T00:01:30"),
        ("@every 0s", "2026-03-01T00:00:00.500000", "2026-03-01T00:00:01"),  # at least a second
    ],
)
def test_next_schedule_time(spec: str, after: str, expected: str) -> None:
    assert parse(spec).next(_at(after)) == _at(expected)


def test_schedules_in_a_time_zone_and_impossible_ones() -> None:
    nine_in_new_york = parse("0 9 * * *", "America/New_York")
    assert nine_in_new_york.next(_at("2026-01-10T00:00:00")) == _at("2026-01-10T14:00:00")
    assert nine_in_new_york.next(_at("2026-07-10T00:00:00")) == _at("2026-07-10T13:00:00")
    assert parse("TZ=Asia/Tokyo 0 9 * * *").next(_at("2026-01-10T01:00:00")) == _at("2026-01-11T00:00:00")
    assert parse("30 2 31 2 *").next(_at("2026-01-01T00:00:00")) is None
    with pytest.raises(ValueError, match="expected exactly 5 fields"):
        parse("* * *")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, clock: FakeClock) -> AsyncIterator[ControllerCluster]:
    def controllers(c: ControllerCluster) -> list:
        return [CronJobController(c.client, c.informers, c.recorder(COMPONENT), clock=clock)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c


def _cron_jobs(client):  # noqa: ANN001, ANN202
    return client.resource("batch", "v1", "cronjobs").namespace(NS)


def _jobs(client):  # noqa: ANN001, ANN202
    return client.resource("batch", "v1", "jobs").namespace(NS)


async def _create(
    c: ControllerCluster, clock: FakeClock, name: str, schedule: str = "* * * * *", **spec: object
) -> dict:
    template = {
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            }
        }
    }
    template["metadata"] = {"labels": {"app": name}}
    body = {"metadata": {"name": name}, "spec": {"schedule": schedule, "jobTemplate": template, **spec}}
    cron_job = await _cron_jobs(c.client).create(body)
    # The clock starts a second past the minute the CronJob was created in (its first schedule is next).
    created = parse_time(cron_job["metadata"]["creationTimestamp"]) or 0.0
    clock.now = created - created % 60 + 1
    return cron_job


async def _advance(c: ControllerCluster, clock: FakeClock, name: str, minutes: int = 1) -> None:
    """Moves the clock on and pokes the CronJob (an annotation) so that it is synced now."""
    clock.now += 60 * minutes
    await _cron_jobs(c.client).patch(name, {"metadata": {"annotations": {"poke": str(clock.now)}}})


async def _owned_jobs(c: ControllerCluster, name: str, count: int) -> list[dict] | None:
    jobs = [
        j for j in (await _jobs(c.client).list())["items"] if j["metadata"]["name"].startswith(f"{name}-")
    ]
    jobs = [j for j in jobs if not j["metadata"].get("deletionTimestamp")]
    return sorted(jobs, key=lambda j: j["metadata"]["name"]) if len(jobs) == count else None


async def _events(c: ControllerCluster, name: str) -> list[tuple[str, str, str]]:
    await c.events.flush()
    items = (await c.client.resource("", "v1", "events").namespace(NS).list())["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name]


async def _complete(c: ControllerCluster, job: dict) -> None:
    """What the job controller (not running here) writes when a Job completes."""
    stamp = "2026-01-01T00:00:00Z"
    conditions = [
        {"type": kind, "status": "True", "reason": "CompletionsReached", "message": "done"}
        for kind in ("SuccessCriteriaMet", "Complete")
    ]
    status = {"startTime": stamp, "completionTime": stamp, "succeeded": 1, "conditions": conditions}
    await _jobs(c.client).update_status({**job, "status": status})


def test_a_job_per_schedule_and_the_status(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock()
        async with cluster(tmp_path, clock) as c:
            cron_job = await _create(c, clock, "tick")
            await _advance(c, clock, "tick")
            [job] = await eventually(lambda: _owned_jobs(c, "tick", 1))
            scheduled = clock.now - clock.now % 60
            assert job["metadata"]["name"] == f"tick-{int(scheduled) // 60}"
            stamp = datetime.datetime.fromtimestamp(scheduled, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == stamp
            assert job["metadata"]["labels"]["app"] == "tick"
            ref = job["metadata"]["ownerReferences"][0]
            assert (ref["kind"], ref["uid"], ref["controller"]) == (
                "CronJob",
                cron_job["metadata"]["uid"],
                True,
            )
            status = (await eventually(lambda: _with_active(c, "tick", 1)))["status"]
            assert (
                status["active"][0]["name"] == job["metadata"]["name"] and status["lastScheduleTime"] == stamp
            )
            assert ("Normal", "SuccessfulCreate", f"Created job {job['metadata']['name']}") in await _events(
                c, "tick"
            )
            await _complete(c, job)
            status = (await eventually(lambda: _with_active(c, "tick", 0)))["status"]
            assert status["lastSuccessfulTime"] == "2026-01-01T00:00:00Z"
            message = f"Saw completed job: {job['metadata']['name']}, condition: Complete"
            assert ("Normal", "SawCompletedJob", message) in await _events(c, "tick")
            # The same minute again: no second Job.
            await _cron_jobs(c.client).patch("tick", {"metadata": {"annotations": {"poke": "again"}}})
            await asyncio.sleep(0.2)
            assert await _owned_jobs(c, "tick", 1)

    asyncio.run(main())


async def _with_active(c: ControllerCluster, name: str, count: int) -> dict | None:
    cron_job = await _cron_jobs(c.client).get(name)
    active = (cron_job.get("status") or {}).get("active") or []
    ready = len(active) == count and (cron_job.get("status") or {}).get("lastScheduleTime")
    return cron_job if ready else None


def test_forbid_and_replace(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock()
        async with cluster(tmp_path, clock) as c:
            await _create(c, clock, "lock", concurrencyPolicy="Forbid")
            await _advance(c, clock, "lock")
            [first] = await eventually(lambda: _owned_jobs(c, "lock", 1))
            await eventually(lambda: _with_active(c, "lock", 1))
            await _advance(c, clock, "lock")
            message = "Not starting job because prior execution is running and concurrency policy is Forbid"
            await eventually(lambda: _has_event(c, "lock", "JobAlreadyActive", message))
            assert [j["metadata"]["name"] for j in await _owned_jobs(c, "lock", 1)] == [
                first["metadata"]["name"]
            ]

            await _cron_jobs(c.client).patch("lock", {"spec": {"concurrencyPolicy": "Replace"}})
            await _advance(c, clock, "lock")
            second = await eventually(lambda: _replaced(c, "lock", first["metadata"]["name"]))
            assert second["metadata"]["name"] != first["metadata"]["name"]
            await eventually(
                lambda: _has_event(c, "lock", "SuccessfulDelete", f"Deleted job {first['metadata']['name']}")
            )

    asyncio.run(main())


async def _replaced(c: ControllerCluster, name: str, old: str) -> dict | None:
    jobs = await _owned_jobs(c, name, 1)
    return jobs[0] if jobs and jobs[0]["metadata"]["name"] != old else None


async def _has_event(c: ControllerCluster, name: str, reason: str, message: str) -> bool:
    return any(e[1] == reason and e[2] == message for e in await _events(c, name))


def test_history_limit_suspend_and_too_many_missed(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock()
        async with cluster(tmp_path, clock) as c:
            await _create(c, clock, "hist", successfulJobsHistoryLimit=1)
            for count in (1, 2):
                await _advance(c, clock, "hist")
                jobs = await eventually(lambda n=count: _owned_jobs(c, "hist", n))
                await _complete(c, jobs[-1])
                await eventually(lambda: _with_active(c, "hist", 0))
            # Two finished, one kept: the older goes.
            [kept] = await eventually(lambda: _owned_jobs(c, "hist", 1))
            assert kept["metadata"]["name"] == jobs[-1]["metadata"]["name"]

            await _cron_jobs(c.client).patch("hist", {"spec": {"suspend": True}})
            await asyncio.sleep(0.3)  # the informer sees the suspension before the clock moves on
            await _advance(c, clock, "hist")
            await asyncio.sleep(0.2)
            assert await _owned_jobs(c, "hist", 1)

            await _cron_jobs(c.client).patch("hist", {"spec": {"suspend": False}})
            await _advance(c, clock, "hist", minutes=200)
            message = "too many missed start times: 201. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
            await eventually(lambda: _has_event(c, "hist", "TooManyMissedTimes", message))
            jobs = await eventually(lambda: _owned_jobs(c, "hist", 2))
            # Only the most recent missed time runs.
            assert jobs[-1]["metadata"]["name"] == f"hist-{int(clock.now) // 60}"

    asyncio.run(main())


def test_a_job_it_did_not_create_is_reported(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock()
        async with cluster(tmp_path, clock) as c:
            cron_job = await _create(c, clock, "adopt", suspend=True)
            ref = {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": "adopt",
                "uid": cron_job["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
            template = cron_job["spec"]["jobTemplate"]["spec"]
            await _jobs(c.client).create(
                {"metadata": {"name": "manual", "ownerReferences": [ref]}, "spec": template}
            )
            message = "Saw a job that the controller did not create or forgot: manual"
            await eventually(lambda: _has_event(c, "adopt", "UnexpectedJob", message))
            assert not (await _cron_jobs(c.client).get("adopt")).get("status", {}).get("active")

    asyncio.run(main())


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("* * * * *", "2026-03-01T12:34:00"),
        ("0 9 * * mon-fri", "2026-02-27T09:00:00"),  # Friday: the weekend's gaps do not fool the count
        ("30 8 1 */3 *", "2026-01-01T08:30:00"),
        ("0 0 29 2 *", "2024-02-29T00:00:00"),
        ("@every 7m", "2026-03-01T12:33:30"),
    ],
)
def test_most_recent_missed_schedule_years_back(spec: str, expected: str) -> None:
    from kube_apiserver.controllers.cronjob.controller import most_recent_schedule_time

    cron_job = {"metadata": {"creationTimestamp": "2016-01-01T00:00:30Z"}, "spec": {}}
    now = _at("2026-03-01T12:34:56")
    _earliest, recent, missed = most_recent_schedule_time(cron_job, now, parse(spec), False)
    assert recent == _at(expected) and missed > 1
