"""The ttl-after-finished controller (pkg/controller/ttlafterfinished): a finished Job with
spec.ttlSecondsAfterFinished is deleted (background propagation, its uid as a precondition) that long
after it finished (its Complete or Failed condition's lastTransitionTime). A Job not yet expired is
requeued for its expiry time; the expiry is checked again on a fresh read before deleting."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..api.batch.jobstatus import finished
from ..apimachinery import errors
from ..apimachinery.clock import wall_time
from ..client.informers import EventHandler, SharedInformerFactory, object_key
from ..client.rest import Client
from .controller_utils import parse_time
from .queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]


def needs_cleanup(job: Object) -> bool:
    return isinstance((job.get("spec") or {}).get("ttlSecondsAfterFinished"), int) and finished(job)


def finish_time(job: Object) -> float | None:
    """jobFinishTime: when the Job's Complete or Failed condition became True."""
    for condition in (job.get("status") or {}).get("conditions") or ():
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None


class TTLAfterFinishedController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        workers: int = 5,
        clock: Callable[[], float] = wall_time,
    ):
        super().__init__("ttl-after-finished", client, None, workers, queue_name="ttl_jobs_to_delete")
        self.clock = clock
        self.jobs = informers.for_resource("batch", "v1", "jobs")
        self.informers = (self.jobs,)

    def register_handlers(self) -> None:
        self.jobs.add_event_handler(
            EventHandler(self._job_changed, lambda _old, new: self._job_changed(new), None)
        )

    def _job_changed(self, job: Object) -> None:
        if not job["metadata"].get("deletionTimestamp") and needs_cleanup(job):
            self.queue.add(object_key(job))

    def _remaining(self, job: Object) -> float | None:
        """processTTL: seconds until the Job expires (<= 0: expired); None when it has no TTL to honour."""
        if job["metadata"].get("deletionTimestamp") or not needs_cleanup(job):
            return None
        finished_at = finish_time(job)
        if finished_at is None:
            raise ValueError(f"unable to find the time when the Job {object_key(job)} finished")
        return finished_at + job["spec"]["ttlSecondsAfterFinished"] - self.clock()

    async def sync_handler(self, key: str) -> None:
        job = self.jobs.indexer.get(key)
        if job is None:
            return
        remaining = self._remaining(job)
        if remaining is None:
            return
        if remaining > 0:
            self.queue.add_after(key, remaining)
            return
        meta = job["metadata"]
        api = self.client.resource("batch", "v1", "jobs").namespace(meta.get("namespace", ""))
        try:
            fresh = await api.get(meta["name"])  # the TTL or the conditions may have changed since
        except errors.StatusError as err:
            if err.code == 404:
                return
            raise
        remaining = self._remaining(fresh)
        if remaining is None:
            return
        if remaining > 0:
            self.queue.add_after(key, remaining)
            return
        log.info("Cleaning up Job %s", key)
        options = {"propagationPolicy": "Background", "preconditions": {"uid": fresh["metadata"].get("uid")}}
        try:
            await api.delete(meta["name"], options)
        except errors.StatusError as err:
            if err.code not in (404, 409):  # gone, or another Job of that name now
                raise
