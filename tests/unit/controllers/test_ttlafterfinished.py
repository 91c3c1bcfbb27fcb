"""The ttl-after-finished controller against a real server (in-process) with a fake clock: a finished
Job is deleted once ttlSecondsAfterFinished has passed since it finished, not before, and a Job that
has not finished or has no TTL is left alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.apimachinery import errors
from kube_apiserver.controllers.controller_utils import parse_time
from kube_apiserver.controllers.ttlafterfinished import TTLAfterFinishedController

NS = "default"
FINISHED = "2026-01-01T00:00:00Z"


class FakeClock:
    def __init__(self) -> None:
        self.now = (parse_time(FINISHED) or 0.0) + 10

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, clock: FakeClock) -> AsyncIterator[ControllerCluster]:
    async with controller_cluster(
        str(tmp_path), lambda c: [TTLAfterFinishedController(c.client, c.informers, clock=clock)]
    ) as c:
        yield c


def _jobs(client):  # noqa: ANN001, ANN202
    return client.resource("batch", "v1", "jobs").namespace(NS)


async def _finished_job(c: ControllerCluster, name: str, finish: bool = True, **spec: object) -> dict:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    job = await _jobs(c.client).create({"metadata": {"name": name}, "spec": {"template": template, **spec}})
    if not finish:
        return job
    conditions = [
        {"type": kind, "status": "True", "reason": "CompletionsReached", "lastTransitionTime": FINISHED}
        for kind in ("SuccessCriteriaMet", "Complete")
    ]
    status = {"startTime": FINISHED, "completionTime": FINISHED, "succeeded": 1, "conditions": conditions}
    return await _jobs(c.client).update_status({**job, "status": status})


async def _gone(c: ControllerCluster, name: str) -> bool:
    try:
        await _jobs(c.client).get(name)
    except errors.StatusError as err:
        return err.code == 404
    return False


def test_a_finished_job_is_deleted_after_its_ttl(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock()
        async with cluster(tmp_path, clock) as c:
            await _finished_job(c, "now", ttlSecondsAfterFinished=0)
            await eventually(lambda: _gone(c, "now"))
            await _finished_job(c, "later", ttlSecondsAfterFinished=100)
            await _finished_job(c, "forever")
            await _finished_job(c, "running", finish=False, ttlSecondsAfterFinished=0)
            await asyncio.sleep(0.3)
            for name in ("later", "forever", "running"):
                assert not await _gone(c, name)
            clock.now += 100
            await _jobs(c.client).patch("later", {"metadata": {"annotations": {"poke": "1"}}})
            await eventually(lambda: _gone(c, "later"))
            assert not await _gone(c, "forever") and not await _gone(c, "running")

    asyncio.run(main())
