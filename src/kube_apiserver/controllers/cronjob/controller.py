"""The cronjob controller (pkg/controller/cronjob, cronjob_controllerv2.go, v1.34): creates a CronJob's
Job at each scheduled time, named `<cronjob>-<scheduled time in minutes since the epoch>` so that a time
is never run twice, honouring suspend, startingDeadlineSeconds and concurrencyPolicy (Allow, Forbid,
Replace); keeps status.active, lastScheduleTime and lastSuccessfulTime; deletes finished Jobs past the
history limits. Each sync requeues the CronJob for its next scheduled time (100 ms after it), so
nothing polls."""

from __future__ import annotations

import copy
import datetime
import functools
import logging
import zoneinfo
from collections.abc import Callable
from typing import Any

from ...api.batch.jobstatus import condition_true
from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import NORMAL, WARNING, EventRecorder
from ...client.rest import Client
from ..controller_utils import controller_of, new_controller_ref, parse_time
from ..queue_controller import QueueController
from .schedule import Schedule, parse

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]

COMPONENT = "cronjob-controller"
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1  # the requeue lands this long after the scheduled time
TOO_MANY_MISSED = 100


def _rfc3339(t: datetime.datetime) -> str:
    return t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def job_name(cron_job: Object, scheduled: datetime.datetime) -> str:
    """getJobName: the CronJob's name and the scheduled time in minutes since the epoch."""
    return f"{cron_job['metadata']['name']}-{int(scheduled.timestamp()) // 60}"


def _finished_condition(job: Object) -> str:
    """getFinishedStatus: "Complete" or "Failed" when the Job finished, else ""."""
    for kind in ("Complete", "Failed"):
        if condition_true(job, kind):
            return kind
    return ""


def most_recent_schedule_time(
    cron_job: Object, now: datetime.datetime, schedule: Schedule, with_deadline: bool
) -> tuple[datetime.datetime, datetime.datetime | None, int]:
    """mostRecentScheduleTime: the earliest time considered, the latest scheduled time in (earliest, now]
    (None when there is none), and about how many were missed."""
    meta, status = cron_job["metadata"], cron_job.get("status") or {}
    earliest = _utc(
        parse_time(status.get("lastScheduleTime")) or parse_time(meta.get("creationTimestamp")) or 0
    )
    deadline = (cron_job.get("spec") or {}).get("startingDeadlineSeconds")
    if with_deadline and isinstance(deadline, int):
        earliest = max(earliest, now - datetime.timedelta(seconds=deadline))
    t1 = schedule.next(earliest)
    if t1 is None or now < t1:
        return earliest, None, 0
    t2 = schedule.next(t1)
    if t2 is None or now < t2:
        return earliest, t1, 1
    interval = round((t2 - t1).total_seconds())
    if interval < 1:
        raise ValueError("time difference between two schedules is less than 1 second")
    missed = int((now - t1).total_seconds()) // interval + 1
    if schedule.every:  # a constant delay: the count is exact
        return earliest, t1 + datetime.timedelta(seconds=(missed - 1) * interval), missed
    return earliest, _last_fire_time(schedule, t1, now), missed


def _last_fire_time(
    schedule: Schedule, first: datetime.datetime, now: datetime.datetime
) -> datetime.datetime:
    """The latest time in [first, now] the schedule fires (first does): a binary search over the second x
    whose next firing at or after x is still <= now, so irregular schedules (weekdays) cost ~30 steps."""
    low, high = int(first.timestamp()), int(now.timestamp())
    while low < high:
        middle = (low + high + 1) // 2
        fires = schedule.next(_utc(middle - 1))
        if fires is not None and fires <= now:
            low = middle
        else:
            high = middle - 1
    return _utc(low)


class CronJobController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        workers: int = 5,
        clock: Callable[[], float] = wall_time,
    ):
        super().__init__("cronjob", client, recorder, workers)
        self.clock = clock
        self.cron_jobs = informers.for_resource("batch", "v1", "cronjobs")
        self.jobs = informers.for_resource("batch", "v1", "jobs")
        self.informers = (self.cron_jobs, self.jobs)
        # Per CronJob, what its last status write returned, newer than the informer's copy until the watch
        # catches up: the next sync starts from it instead of conflicting on its own write.
        self.written: dict[str, Object] = {}

    def register_handlers(self) -> None:
        self.cron_jobs.add_event_handler(
            EventHandler(self._enqueue, lambda _old, new: self._enqueue(new), None)
        )
        self.jobs.add_event_handler(
            EventHandler(self._job_changed, lambda _old, new: self._job_changed(new), self._job_changed)
        )

    def _enqueue(self, cron_job: Object) -> None:
        self.queue.add(object_key(cron_job))

    def _job_changed(self, job: Object) -> None:
        ref = controller_of(job)
        if ref is None or ref.get("kind") != "CronJob":
            return
        cron_job = self.cron_jobs.indexer.get_by_name(
            job["metadata"].get("namespace", ""), ref.get("name", "")
        )
        if cron_job is not None and cron_job["metadata"].get("uid") == ref.get("uid"):
            self.queue.add(object_key(cron_job))

    def _api(self, resource: str, namespace: str) -> Any:
        return self.client.resource("batch", "v1", resource).namespace(namespace)

    # ---- sync ----

    def _latest(self, key: str) -> Object | None:
        cached, written = self.cron_jobs.indexer.get(key), self.written.pop(key, None)
        if (
            cached is None
            or written is None
            or written["metadata"].get("uid") != cached["metadata"].get("uid")
        ):
            return cached
        if _resource_version(written) > _resource_version(cached):
            self.written[key] = written
            return written
        return cached

    async def sync_handler(self, key: str) -> None:
        cron_job = self._latest(key)
        if cron_job is None:
            return
        uid = cron_job["metadata"].get("uid")
        jobs = [
            j
            for j in self.jobs.indexer.list(cron_job["metadata"].get("namespace", ""))
            if (controller_of(j) or {}).get("uid") == uid
        ]
        original = cron_job.get("status") or {}
        cron_job = {**cron_job, "status": dict(original)}
        failure: Exception | None = None
        requeue_after: float | None = None
        try:
            requeue_after = await self._sync_cron_job(cron_job, jobs)
        except (errors.StatusError, ValueError) as err:
            failure = err
        if not cron_job["metadata"].get("deletionTimestamp"):
            await self._cleanup_finished_jobs(cron_job, jobs)
        if cron_job["status"] != original:
            self.written[key] = await self._update_status(cron_job)
        if failure is not None:
            raise failure
        if requeue_after is not None:
            self.queue.add_after(key, requeue_after)

    async def _update_status(self, cron_job: Object) -> Object:
        """The status this sync computed, written once more onto a fresh read when the CronJob changed
        meanwhile (a spec edit): the status is this controller's alone, and a Job it just created must not
        be lost from the active list."""
        api = self._api("cronjobs", cron_job["metadata"]["namespace"])
        try:
            return await api.update_status(cron_job)
        except errors.StatusError as err:
            if err.code != 409:
                raise
            fresh = await api.get(cron_job["metadata"]["name"])
            if fresh["metadata"].get("uid") != cron_job["metadata"].get("uid"):
                raise
            return await api.update_status({**fresh, "status": cron_job["status"]})

    async def _reconcile_jobs(self, cron_job: Object, jobs: list[Object]) -> None:
        """The active list against the Jobs that exist, and lastSuccessfulTime."""
        status = cron_job["status"]
        active_uids = {ref.get("uid") for ref in status.get("active") or ()}
        for job in jobs:
            meta = job["metadata"]
            finished = _finished_condition(job)
            if meta.get("uid") not in active_uids and not finished:
                if await self._fresh_lists(cron_job, meta.get("uid")):
                    status = cron_job["status"]
                    active_uids = {ref.get("uid") for ref in status.get("active") or ()}
                    continue
                self.recorder.event(
                    cron_job,
                    WARNING,
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {meta['name']}",
                )
            elif meta.get("uid") in active_uids and finished:
                _remove_active(status, meta.get("uid"))
                self.recorder.event(
                    cron_job,
                    NORMAL,
                    "SawCompletedJob",
                    f"Saw completed job: {meta['name']}, condition: {finished}",
                )
            completion = (job.get("status") or {}).get("completionTime")
            if finished == "Complete" and completion:
                last = status.get("lastSuccessfulTime")
                if last is None or (parse_time(completion) or 0) > (parse_time(last) or 0):
                    status["lastSuccessfulTime"] = completion
        existing = {j["metadata"].get("uid") for j in jobs}
        for ref in list(status.get("active") or ()):
            if ref.get("uid") in existing:
                continue
            try:
                await self._api("jobs", ref.get("namespace") or cron_job["metadata"]["namespace"]).get(
                    ref.get("name", "")
                )
            except errors.StatusError as err:
                if err.code != 404:
                    raise
                self.recorder.event(
                    cron_job, NORMAL, "MissingJob", f"Active job went missing: {ref.get('name')}"
                )
                _remove_active(status, ref.get("uid"))

    async def _fresh_lists(self, cron_job: Object, uid: str | None) -> bool:
        """Whether a fresh read of the CronJob has the Job in its active list (the informer's copy may
        predate the status write that put it there); if so the fresh copy replaces `cron_job`'s."""
        meta = cron_job["metadata"]
        fresh = await self._api("cronjobs", meta.get("namespace", "")).get(meta["name"])
        if fresh["metadata"].get("uid") != meta.get("uid"):
            return False
        if not any(ref.get("uid") == uid for ref in (fresh.get("status") or {}).get("active") or ()):
            return False
        cron_job.clear()
        cron_job.update({**fresh, "status": dict(fresh.get("status") or {})})
        return True

    async def _sync_cron_job(self, cron_job: Object, jobs: list[Object]) -> float | None:
        """syncCronJob: the seconds until the next schedule, or None when nothing is scheduled."""
        await self._reconcile_jobs(cron_job, jobs)
        spec, status = cron_job.get("spec") or {}, cron_job["status"]
        if cron_job["metadata"].get("deletionTimestamp"):
            return None
        schedule = self._schedule(cron_job)
        if schedule is None or spec.get("suspend"):
            return None
        now = _utc(self.clock())
        scheduled = self._next_schedule_time(cron_job, now, schedule)
        if scheduled is None:
            return self._until_next(cron_job, now, schedule)
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int) and scheduled + datetime.timedelta(seconds=deadline) < now:
            self.recorder.event(
                cron_job,
                WARNING,
                "MissSchedule",
                f"Missed scheduled time to start a job: {scheduled.strftime('%a, %d %b %Y %H:%M:%S +0000')}",
            )
            return self._until_next(cron_job, now, schedule)
        name = job_name(cron_job, scheduled)
        if any(ref.get("name") == name for ref in status.get("active") or ()) or (
            parse_time(status.get("lastScheduleTime")) == scheduled.timestamp()
        ):
            return self._until_next(cron_job, now, schedule)
        policy = spec.get("concurrencyPolicy")
        if policy == "Forbid" and status.get("active"):
            self.recorder.event(
                cron_job,
                NORMAL,
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return self._until_next(cron_job, now, schedule)
        if policy == "Replace":
            for ref in list(status.get("active") or ()):
                await self._delete_job(cron_job, ref.get("name", ""), ref.get("uid", ""))
        created = await self._create_job(cron_job, scheduled)
        if created is not None:
            status["active"] = [*(status.get("active") or ()), _job_reference(created)]
            status["lastScheduleTime"] = _rfc3339(scheduled)
        return self._until_next(cron_job, now, schedule)

    def _schedule(self, cron_job: Object) -> Schedule | None:
        spec = cron_job.get("spec") or {}
        zone = spec.get("timeZone")
        try:
            if zone:
                zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as err:
            self.recorder.event(cron_job, WARNING, "UnknownTimeZone", f'invalid timeZone: "{zone}": {err}')
            return None
        text = spec.get("schedule") or ""
        if "TZ" in text:
            self.recorder.event(
                cron_job,
                WARNING,
                "UnsupportedSchedule",
                f'CRON_TZ or TZ used in schedule "{text}" is not officially supported, see '
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
            )
        try:
            return parse(text, zone)
        except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError) as err:
            self.recorder.event(
                cron_job, WARNING, "UnparseableSchedule", f'unparseable schedule: "{text}" : {err}'
            )
            return None

    def _next_schedule_time(
        self, cron_job: Object, now: datetime.datetime, schedule: Schedule
    ) -> datetime.datetime | None:
        try:
            _earliest, recent, missed = most_recent_schedule_time(cron_job, now, schedule, True)
        except ValueError as err:
            spec = cron_job.get("spec") or {}
            self.recorder.event(
                cron_job, WARNING, "InvalidSchedule", f"invalid schedule: {spec.get('schedule')} : {err}"
            )
            return None
        if recent is None or recent > now:
            return None
        if missed > TOO_MANY_MISSED:
            self.recorder.event(
                cron_job,
                WARNING,
                "TooManyMissedTimes",
                f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
            )
        return recent

    def _until_next(self, cron_job: Object, now: datetime.datetime, schedule: Schedule) -> float | None:
        """nextScheduleTimeDuration: seconds until the schedule after the most recent one, plus a little."""
        try:
            earliest, recent, _missed = most_recent_schedule_time(cron_job, now, schedule, False)
        except ValueError:
            return None
        following = schedule.next(recent or earliest)
        if following is None:
            return None
        return max(0.0, (following - now).total_seconds()) + NEXT_SCHEDULE_DELTA

    async def _create_job(self, cron_job: Object, scheduled: datetime.datetime) -> Object | None:
        job = job_from_template(cron_job, scheduled)
        namespace = cron_job["metadata"]["namespace"]
        try:
            created = await self._api("jobs", namespace).create(job)
        except errors.StatusError as err:
            if err.code == 409:  # made by an earlier sync whose status write was lost: adopt it as active
                existing = await self._api("jobs", namespace).get(job["metadata"]["name"])
                owned = (controller_of(existing) or {}).get("uid") == cron_job["metadata"].get("uid")
                return existing if owned and not _finished_condition(existing) else None
            if not any(
                c.get("type") == "NamespaceTerminating" for c in (err.details or {}).get("causes") or ()
            ):
                self.recorder.event(cron_job, WARNING, "FailedCreate", f"Error creating job: {err.message}")
            raise
        self.recorder.event(
            cron_job, NORMAL, "SuccessfulCreate", f"Created job {created['metadata']['name']}"
        )
        return created

    async def _delete_job(self, cron_job: Object, name: str, uid: str) -> bool:
        """deleteJob: the Job (background propagation) and its place in the active list."""
        try:
            await self._api("jobs", cron_job["metadata"]["namespace"]).delete(
                name, {"propagationPolicy": "Background"}
            )
        except errors.StatusError as err:
            if err.code != 404:
                self.recorder.event(cron_job, WARNING, "FailedDelete", f"Deleted job: {err.message}")
                return False
        _remove_active(cron_job["status"], uid)
        self.recorder.event(cron_job, NORMAL, "SuccessfulDelete", f"Deleted job {name}")
        return True

    async def _cleanup_finished_jobs(self, cron_job: Object, jobs: list[Object]) -> None:
        """cleanupFinishedJobs: the oldest finished Jobs past successfulJobsHistoryLimit and
        failedJobsHistoryLimit go."""
        spec = cron_job.get("spec") or {}
        for kind, limit_field in (
            ("Complete", "successfulJobsHistoryLimit"),
            ("Failed", "failedJobsHistoryLimit"),
        ):
            limit = spec.get(limit_field)
            if not isinstance(limit, int):
                continue
            done = [j for j in jobs if _finished_condition(j) == kind]
            if len(done) <= limit:
                continue
            done.sort(key=functools.cmp_to_key(_by_start_time))
            for job in done[: len(done) - limit]:
                await self._delete_job(cron_job, job["metadata"]["name"], job["metadata"].get("uid", ""))


def _by_start_time(a: Object, b: Object) -> int:
    """byJobStartTime: started before not started, earlier first, then by name."""
    ta, tb = (
        parse_time((a.get("status") or {}).get("startTime")),
        parse_time((b.get("status") or {}).get("startTime")),
    )
    if ta is None and tb is not None:
        return 1
    if tb is None and ta is not None:
        return -1
    if ta == tb:
        na, nb = a["metadata"]["name"], b["metadata"]["name"]
        return -1 if na < nb else (1 if na > nb else 0)
    return -1 if ta < tb else 1  # type: ignore[operator]


def _resource_version(obj: Object) -> int:
    try:
        return int(obj["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _remove_active(status: Object, uid: str | None) -> None:
    remaining = [ref for ref in status.get("active") or () if ref.get("uid") != uid]
    if remaining:
        status["active"] = remaining
    else:
        status.pop("active", None)


def _job_reference(job: Object) -> Object:
    meta = job["metadata"]
    return {
        "kind": "Job",
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": "batch/v1",
        "resourceVersion": meta.get("resourceVersion", ""),
    }


def job_from_template(cron_job: Object, scheduled: datetime.datetime) -> Object:
    """getJobFromTemplate2: the jobTemplate's labels, annotations (with the scheduled time, in the
    CronJob's time zone) and spec, a deterministic name, the CronJob as controller."""
    template = (cron_job.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    zone = (cron_job.get("spec") or {}).get("timeZone")
    local = (
        scheduled.astimezone(zoneinfo.ZoneInfo(zone)) if zone and zone not in ("UTC", "Local") else scheduled
    )
    stamp = local.strftime("%Y-%m-%dT%H:%M:%S") + _offset(local)
    meta: Object = {
        "name": job_name(cron_job, scheduled),
        "annotations": {**(template_meta.get("annotations") or {}), SCHEDULED_TIMESTAMP: stamp},
        "ownerReferences": [new_controller_ref(cron_job, "batch/v1", "CronJob")],
    }
    if template_meta.get("labels"):
        meta["labels"] = dict(template_meta["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _offset(t: datetime.datetime) -> str:
    """Go's RFC 3339 zone: Z for UTC, else ±hh:mm."""
    delta = t.utcoffset() or datetime.timedelta(0)
    if not delta:
        return "Z"
    minutes = int(delta.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
