"""The job controller (pkg/controller/job, v1.34): runs a Job's pods to completion.

Each sync counts the Job's pods: it keeps min(parallelism, remaining completions) of them active
(NonIndexed: any pods; Indexed: one per completion index not yet succeeded), and tracks every pod that
terminated through the batch.kubernetes.io/job-tracking finalizer, so that none is counted twice or
lost: the pod's uid goes into status.uncountedTerminatedPods first, then its finalizer is removed, then
it moves into status.succeeded / status.failed (and completedIndexes). A Job fails (FailureTarget, then
Failed once no pod is left running) on a FailJob rule of its podFailurePolicy, past its backoffLimit, or
past activeDeadlineSeconds; it succeeds (SuccessCriteriaMet, then Complete) when enough pods succeeded
or its successPolicy is met. A suspended Job has its pods deleted. Pods that failed delay the next
creates by 10 s doubling per failure since the last success (at most 10 min)."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...api.batch.jobstatus import finished
from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...apimachinery.labels import SelectorParseError, selector_from_label_selector
from ...client.informers import EventHandler, SharedInformerFactory, object_key
from ...client.record import NORMAL, WARNING, EventRecorder
from ...client.rest import STRATEGIC_MERGE_PATCH, Client
from ...client.workqueue import WorkQueue, run_worker
from ..controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from ..controller_utils import (
    FAILED_CREATE_POD_REASON,
    SUCCESSFUL_CREATE_POD_REASON,
    PodControl,
    UIDTrackingControllerExpectations,
    controller_of,
    controllers_selecting,
    is_pod_active,
    is_pod_ready,
    new_controller_ref,
    parse_time,
    pod_from_template,
    pod_phase,
    rank_pods_for_deletion,
    slow_start_batch,
)
from ..queue_controller import QueueController
from .indexes import COMPLETION_INDEX, UNKNOWN_INDEX, format_indexes, parse_indexes, valid_index
from .policy import FAIL_INDEX, FAIL_JOB, IGNORE, match_pod_failure_policy, match_success_policy

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]

COMPONENT = "job-controller"
KIND, API_VERSION = "Job", "batch/v1"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
MANAGED_BY_CONTROLLER = "kubernetes.io/job-controller"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
MAX_POD_CREATE_DELETE_PER_SYNC = 500
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0
MAX_GENERATED_NAME_LENGTH = 58  # a generateName longer than this loses its random suffix

# Condition reasons and messages (pkg/apis/batch and job_controller.go).
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
POD_FAILURE_POLICY = "PodFailurePolicy"
MAX_FAILED_INDEXES_EXCEEDED = (
    "MaxFailedIndexesExceeded",
    "Job has exceeded the specified maximal number of failed indexes",
)
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
SUCCESS_POLICY = "SuccessPolicy"


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _has_finalizer(pod: Object) -> bool:
    return JOB_TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ())


def _indexed(job: Object) -> bool:
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def _completions(job: Object) -> int | None:
    value = (job.get("spec") or {}).get("completions")
    return value if isinstance(value, int) else None


def _per_index(job: Object) -> bool:
    """An Indexed Job with backoffLimitPerIndex: each index has its own failure budget."""
    return _indexed(job) and isinstance((job.get("spec") or {}).get("backoffLimitPerIndex"), int)


def _index_failure_count(pod: Object) -> int:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(INDEX_FAILURE_COUNT)
    return (
        int(value)
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10
        else 0
    )


def _only_replace_failed(job: Object) -> bool:
    """podReplacementPolicy Failed (the default with a podFailurePolicy): a pod being deleted is neither
    counted failed nor replaced until it reaches the Failed phase."""
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: Object, job: Object) -> bool:
    """isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it succeeded."""
    if pod_phase(pod) == "Failed":
        return True
    if _only_replace_failed(job):
        return False
    return bool(pod["metadata"].get("deletionTimestamp")) and pod_phase(pod) != "Succeeded"


def _is_terminating(pod: Object) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp")) and pod_phase(pod) not in ("Succeeded", "Failed")


def _condition(kind: str, status: str, reason: str, message: str, now: float) -> Object:
    stamp = _rfc3339(now)
    return {
        "type": kind,
        "status": status,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def _find_condition(status: Object, kind: str) -> Object | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == kind), None)


def _set_condition(status: Object, condition: Object) -> None:
    """Adds the condition, or replaces the one of its type when its status changes."""
    conditions = [c for c in status.get("conditions") or () if c.get("type") != condition["type"]]
    old = _find_condition(status, condition["type"])
    if (
        old is not None
        and old.get("status") == condition["status"]
        and old.get("reason") == condition["reason"]
        and old.get("message") == condition["message"]
    ):
        return
    status["conditions"] = (
        [*conditions, condition]
        if old is None
        else [condition if c.get("type") == condition["type"] else c for c in status.get("conditions") or ()]
    )


@dataclass
class BackoffRecord:
    """The failures since the last success (backoffRecord), which delay the next pod creates."""

    failures: int = 0
    last_failure: float = 0.0


@dataclass
class SyncContext:
    """What one sync learned about a Job's pods (syncJobCtx)."""

    job: Object
    pods: list[Object]
    active: list[Object]
    terminating: int
    new_succeeded: list[Object] = field(default_factory=list)
    new_failed: list[Object] = field(default_factory=list)
    ignored: list[Object] = field(default_factory=list)  # failed, matching an Ignore rule: never counted
    fail_job_message: str = ""
    fail_index: set[str] = field(default_factory=set)  # uids of failed pods matching a FailIndex rule


class JobController(QueueController):
    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        recorder: EventRecorder,
        workers: int = 5,
        clock: Callable[[], float] = wall_time,
        pod_failure_backoff: float = DEFAULT_POD_FAILURE_BACKOFF,
    ):
        """`pod_failure_backoff`: the first delay after a pod failure (upstream's 10 s), doubling per
        further failure up to MAX_POD_FAILURE_BACKOFF."""
        super().__init__("job", client, recorder, workers)
        self.clock = clock
        self.pod_failure_backoff = pod_failure_backoff
        self.jobs = informers.for_resource("batch", "v1", "jobs")
        self.pods = informers.for_resource("", "v1", "pods")
        self.orphans: WorkQueue[str] = WorkQueue("job_orphan_pod")
        self.expectations = UIDTrackingControllerExpectations()
        # Per Job, the pods whose finalizer this controller removed and the informer still shows.
        self.finalizer_expectations: dict[str, set[str]] = {}
        self.backoff: dict[str, BackoffRecord] = {}
        # Per Job, what its last status write returned: newer than the informer's copy until the watch
        # catches up, so the next sync does not conflict on its own write.
        self.written: dict[str, Object] = {}
        self.pod_control = PodControl(lambda ns: client.resource("", "v1", "pods").namespace(ns), recorder)
        self.informers = (self.jobs, self.pods)

    # ---- lifecycle ----

    def register_handlers(self) -> None:
        self.jobs.add_event_handler(EventHandler(self._add_job, self._update_job, self._delete_job))
        self.pods.add_event_handler(EventHandler(self._add_pod, self._update_pod, self._delete_pod))

    def worker_syncs(self) -> list[Callable[[], Any]]:
        return [*super().worker_syncs(), self._orphan_work]

    async def _orphan_work(self) -> None:
        await run_worker(self.orphans, self._sync_orphan_pod, "job orphan pod")

    async def stop(self) -> None:
        self.orphans.shut_down()
        await super().stop()

    # ---- informer handlers ----

    def _add_job(self, job: Object) -> None:
        self.queue.add(object_key(job))

    def _update_job(self, old: Object, new: Object) -> None:
        if old["metadata"].get("uid") != new["metadata"].get("uid"):
            self._delete_job(old)
        self.queue.add(object_key(new))

    def _delete_job(self, job: Object) -> None:
        key = object_key(job)
        self.expectations.delete(key)
        self.finalizer_expectations.pop(key, None)
        self.backoff.pop(key, None)
        self.written.pop(key, None)
        self.queue.add(key)
        uid = job["metadata"].get("uid")
        for pod in self.pods.indexer.list(job["metadata"].get("namespace", "")):
            if _has_finalizer(pod) and (controller_of(pod) or {}).get("uid") == uid:
                self.orphans.add(object_key(pod))

    def _job_of(self, pod: Object) -> Object | None:
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != KIND:
            return None
        job = self.jobs.indexer.get_by_name(pod["metadata"].get("namespace", ""), ref.get("name", ""))
        if job is None or job["metadata"].get("uid") != ref.get("uid"):
            return None
        return job

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod, final=False)
            return
        job = self._job_of(pod)
        if job is not None:
            key = object_key(job)
            self.expectations.creation_observed(key)
            self.queue.add(key)
            return
        if _has_finalizer(pod):
            self.orphans.add(object_key(pod))
        for job in controllers_selecting(
            pod, self.jobs.indexer.list(pod["metadata"].get("namespace", "")), _selector
        ):
            self.queue.add(object_key(job))

    def _update_pod(self, old: Object, new: Object) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        if new["metadata"].get("deletionTimestamp"):
            self._delete_pod(new, final=False)
            return
        job = self._job_of(new)
        if job is None:
            if _has_finalizer(new):
                self.orphans.add(object_key(new))
            old_job = self._job_of(old)
            if old_job is not None:
                self.queue.add(object_key(old_job))
            return
        key = object_key(job)
        if _has_finalizer(old) and not _has_finalizer(new):
            self._finalizer_removal_observed(key, new)
        self.queue.add(key)

    def _delete_pod(self, pod: Object, final: bool = True) -> None:
        job = self._job_of(pod)
        if job is None:
            if _has_finalizer(pod) and not final:
                self.orphans.add(object_key(pod))
            return
        key = object_key(job)
        self.expectations.deletion_of_observed(key, object_key(pod))
        if final or not _has_finalizer(pod):
            self._finalizer_removal_observed(key, pod)
        self.queue.add(key)

    def _finalizer_removal_observed(self, key: str, pod: Object) -> None:
        expected = self.finalizer_expectations.get(key)
        if expected is not None:
            expected.discard(pod["metadata"].get("uid", ""))

    # ---- orphan pods ----

    async def _sync_orphan_pod(self, key: str) -> None:
        """A pod with the tracking finalizer whose Job is gone (or finished) loses the finalizer, so that it
        can be deleted (syncOrphanPod)."""
        pod = self.pods.indexer.get(key)
        if pod is None or not _has_finalizer(pod):
            return
        ref = controller_of(pod)
        namespace = pod["metadata"].get("namespace", "")
        if ref is not None and ref.get("kind") == KIND:
            try:
                job = (
                    await self.client.resource("batch", "v1", "jobs")
                    .namespace(namespace)
                    .get(ref.get("name", ""))
                )
            except errors.StatusError as err:
                if err.code != 404:
                    raise
            else:
                if job["metadata"].get("uid") == ref.get("uid") and not finished(job):
                    return  # its Job is alive and will count it
        await self._remove_finalizer(pod)

    # ---- sync ----

    async def sync_handler(self, key: str) -> None:
        job = self._latest(key)
        if job is None:
            self.expectations.delete(key)
            self.finalizer_expectations.pop(key, None)
            self.backoff.pop(key, None)
            self.written.pop(key, None)
            return
        managed_by = (job.get("spec") or {}).get("managedBy")
        if managed_by and managed_by != MANAGED_BY_CONTROLLER:
            return  # another controller's Job
        try:
            selector = _selector(job)
        except (SelectorParseError, ValueError) as err:
            log.info("Job %s: invalid selector: %s", key, err)
            return
        if finished(job) or job["metadata"].get("deletionTimestamp"):
            await self._release_finished(job)  # a Job being deleted makes no pods, and lets its pods go
            return
        namespace = job["metadata"].get("namespace", "")
        pods = await self._claim(job, selector, self.pods.indexer.list(namespace))
        await self._sync(key, job, pods)

    async def _release_finished(self, job: Object) -> None:
        """A finished (or deleted) Job's pods keep no finalizer (one the last sync failed to remove)."""
        uid = job["metadata"].get("uid")
        pods = [
            p
            for p in self.pods.indexer.list(job["metadata"].get("namespace", ""))
            if _has_finalizer(p) and (controller_of(p) or {}).get("uid") == uid
        ]
        for pod in pods[:MAX_POD_CREATE_DELETE_PER_SYNC]:
            await self._remove_finalizer(pod)

    async def _claim(self, job: Object, selector: Any, pods: list[Object]) -> list[Object]:
        meta = job["metadata"]
        api = self.client.resource("batch", "v1", "jobs").namespace(meta.get("namespace", ""))

        async def fresh() -> Object:
            current = await api.get(meta["name"])
            if current["metadata"].get("uid") != meta.get("uid"):
                raise ValueError(
                    f"original Job {meta.get('namespace')}/{meta['name']} is gone: got uid "
                    f"{current['metadata'].get('uid')}, wanted {meta.get('uid')}"
                )
            return current

        manager = ControllerRefManager(
            job, selector, API_VERSION, KIND, self.pod_control.patch_pod, recheck_deletion_timestamp(fresh)
        )
        return await manager.claim(pods)

    def _latest(self, key: str) -> Object | None:
        """The informer's Job, or the one this controller last wrote when that is the same Job, newer."""
        cached, written = self.jobs.indexer.get(key), self.written.get(key)
        if (
            cached is None
            or written is None
            or written["metadata"].get("uid") != cached["metadata"].get("uid")
        ):
            self.written.pop(key, None)
            return cached
        if _resource_version(written) > _resource_version(cached):
            return written
        self.written.pop(key, None)  # the informer caught up
        return cached

    def _context(self, key: str, job: Object, pods: list[Object]) -> SyncContext:
        status = job.get("status") or {}
        uncounted = status.get("uncountedTerminatedPods") or {}
        known = (
            set(uncounted.get("succeeded") or ())
            | set(uncounted.get("failed") or ())
            | self.finalizer_expectations.get(key, set())
        )
        ctx = SyncContext(
            job, pods, [p for p in pods if is_pod_active(p)], sum(1 for p in pods if _is_terminating(p))
        )
        policy = (job.get("spec") or {}).get("podFailurePolicy")
        completions = _completions(job) or 0
        for pod in pods:
            failed = is_pod_failed(pod, job)
            match = (
                match_pod_failure_policy(policy, pod)
                if failed and policy and pod_phase(pod) == "Failed"
                else None
            )
            if match is not None and match.action == FAIL_JOB and not ctx.fail_job_message:
                ctx.fail_job_message = match.message
            if not _has_finalizer(pod) or pod["metadata"].get("uid") in known:
                continue
            if pod_phase(pod) == "Succeeded":
                if _indexed(job) and valid_index(pod, completions) == UNKNOWN_INDEX:
                    ctx.ignored.append(pod)
                else:
                    ctx.new_succeeded.append(pod)
            elif failed:
                (ctx.ignored if match is not None and match.action == IGNORE else ctx.new_failed).append(pod)
                if match is not None and match.action == FAIL_INDEX:
                    ctx.fail_index.add(pod["metadata"].get("uid", ""))
        return ctx

    def _record_backoff(self, key: str, ctx: SyncContext) -> BackoffRecord:
        record = self.backoff.setdefault(key, BackoffRecord())
        if ctx.new_succeeded:
            record.failures = 0
        if ctx.new_failed:
            record.failures += len(ctx.new_failed)
            record.last_failure = self.clock()
        return record

    def _backoff_remaining(self, record: BackoffRecord) -> float:
        if record.failures <= 0:
            return 0.0
        delay = min(self.pod_failure_backoff * 2 ** min(record.failures - 1, 30), MAX_POD_FAILURE_BACKOFF)
        return record.last_failure + delay - self.clock()

    async def _sync(self, key: str, job: Object, pods: list[Object]) -> None:
        now = self.clock()
        spec = job.get("spec") or {}
        ctx = self._context(key, job, pods)
        record = self._record_backoff(key, ctx)
        status = copy.deepcopy(job.get("status") or {})
        uncounted = status.setdefault("uncountedTerminatedPods", {})
        for name, new in (("succeeded", ctx.new_succeeded), ("failed", ctx.new_failed)):
            if new:
                uncounted[name] = [*(uncounted.get(name) or ()), *(p["metadata"]["uid"] for p in new)]
        if _per_index(job):
            status["failedIndexes"] = format_indexes(self._failed_indexes(job, status, ctx))
        suspended = bool(spec.get("suspend"))
        if status.get("startTime") is None and not suspended:
            status["startTime"] = _rfc3339(now)
        self._suspend_condition(job, status, suspended, now)
        final = self._final_condition(key, job, status, ctx, now)
        if final is not None and final["type"] == "Failed":
            self._count_unfinished_as_failed(key, ctx, uncounted)
        manage_error: Exception | None = None
        active = len(ctx.active)
        try:
            if final is not None:  # deleteActivePods: the pods keep their finalizer and count as failed
                active -= await self._delete_pods(key, job, ctx.active[:MAX_POD_CREATE_DELETE_PER_SYNC])
            elif suspended:
                active -= await self._delete_pods(key, job, ctx.active[:MAX_POD_CREATE_DELETE_PER_SYNC], True)
            elif self.expectations.satisfied(key):
                active += await self._manage(key, job, ctx, status, record)
        except (errors.StatusError, ValueError) as err:
            manage_error = err
        if suspended and active == 0 and not ctx.active:
            status.pop("startTime", None)  # resuming starts the clock again
        _set_counter(status, "active", active)
        status["ready"] = sum(1 for p in ctx.active if is_pod_ready(p)) if active > 0 else 0
        status["terminating"] = ctx.terminating + max(0, len(ctx.active) - active)  # those just deleted too
        job = await self._write_status(job, status)
        await self._count_terminated(key, job, ctx, final, deleted=max(0, len(ctx.active) - active))
        if manage_error is not None:
            raise manage_error

    def _count_unfinished_as_failed(self, key: str, ctx: SyncContext, uncounted: Object) -> None:
        """A failing Job's pods that did not succeed count as failed (their finalizers go with the rest):
        the ones it deletes now included."""
        known = set(uncounted.get("succeeded") or ()) | set(uncounted.get("failed") or ())
        known |= self.finalizer_expectations.get(key, set()) | {p["metadata"].get("uid") for p in ctx.ignored}
        unfinished = [
            p
            for p in ctx.pods
            if _has_finalizer(p) and pod_phase(p) != "Succeeded" and p["metadata"].get("uid") not in known
        ]
        if unfinished:
            ctx.new_failed += unfinished
            uncounted["failed"] = [
                *(uncounted.get("failed") or ()),
                *(p["metadata"]["uid"] for p in unfinished),
            ]

    def _suspend_condition(self, job: Object, status: Object, suspended: bool, now: float) -> None:
        current = _find_condition(status, "Suspended")
        if suspended and (current is None or current.get("status") != "True"):
            _set_condition(status, _condition("Suspended", "True", "JobSuspended", "Job suspended", now))
            self.recorder.event(job, NORMAL, "Suspended", "Job suspended")
        elif not suspended and current is not None and current.get("status") == "True":
            _set_condition(status, _condition("Suspended", "False", "JobResumed", "Job resumed", now))
            self.recorder.event(job, NORMAL, "Resumed", "Job resumed")
            status["startTime"] = _rfc3339(now)  # a resumed Job's deadline counts from now

    def _final_condition(
        self, key: str, job: Object, status: Object, ctx: SyncContext, now: float
    ) -> Object | None:
        """The terminal condition the Job is heading for (Complete or Failed), after writing the interim
        one (SuccessCriteriaMet or FailureTarget) into `status`; None while it runs."""
        for interim, final_type in (("FailureTarget", "Failed"), ("SuccessCriteriaMet", "Complete")):
            condition = _find_condition(status, interim)
            if condition is not None and condition.get("status") == "True":
                return _condition(
                    final_type, "True", condition.get("reason", ""), condition.get("message", ""), now
                )
        failure = self._failure(job, status, ctx, now)
        if failure is not None:
            _set_condition(status, _condition("FailureTarget", "True", *failure, now))
            return _condition("Failed", "True", *failure, now)
        success = self._success(job, status, ctx)
        if success is not None:
            _set_condition(status, _condition("SuccessCriteriaMet", "True", *success, now))
            return _condition("Complete", "True", *success, now)
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        start = parse_time(status.get("startTime"))
        if isinstance(deadline, int) and start is not None and not (job.get("spec") or {}).get("suspend"):
            self.queue.add_after(key, start + deadline - now)
        return None

    def _failed_indexes(self, job: Object, status: Object, ctx: SyncContext) -> set[int]:
        """With backoffLimitPerIndex: the failed indexes, with those of this sync's failed pods whose index
        failed more than the limit or matched a FailIndex rule."""
        completions, limit = _completions(job) or 0, (job.get("spec") or {}).get("backoffLimitPerIndex") or 0
        failed = parse_indexes(status.get("failedIndexes"), completions)
        for pod in ctx.new_failed:
            index = valid_index(pod, completions)
            if index == UNKNOWN_INDEX:
                continue
            if pod["metadata"].get("uid") in ctx.fail_index or _index_failure_count(pod) + 1 > limit:
                failed.add(index)
        return failed - self._succeeded_indexes(job, status, ctx)

    def _failure(self, job: Object, status: Object, ctx: SyncContext, now: float) -> tuple[str, str] | None:
        spec = job.get("spec") or {}
        if ctx.fail_job_message:
            return POD_FAILURE_POLICY, ctx.fail_job_message
        if _per_index(job):
            failed_indexes = parse_indexes(status.get("failedIndexes"), _completions(job) or 0)
            max_failed = spec.get("maxFailedIndexes")
            if isinstance(max_failed, int) and len(failed_indexes) > max_failed:
                return MAX_FAILED_INDEXES_EXCEEDED
            done = failed_indexes | self._succeeded_indexes(job, status, ctx)
            if failed_indexes and len(done) >= (_completions(job) or 0):
                return FAILED_INDEXES
        failed = (status.get("failed") or 0) + len(
            (status.get("uncountedTerminatedPods") or {}).get("failed") or ()
        )
        backoff_limit = spec.get("backoffLimit")
        if isinstance(backoff_limit, int) and (failed > backoff_limit or _past_backoff_on_failure(job, ctx)):
            return BACKOFF_LIMIT_EXCEEDED
        deadline, start = spec.get("activeDeadlineSeconds"), parse_time(status.get("startTime"))
        if (
            isinstance(deadline, int)
            and start is not None
            and not spec.get("suspend")
            and now - start >= deadline
        ):
            return DEADLINE_EXCEEDED
        return None

    def _success(self, job: Object, status: Object, ctx: SyncContext) -> tuple[str, str] | None:
        completions = _completions(job)
        if _indexed(job) and completions is not None:
            succeeded = self._succeeded_indexes(job, status, ctx)
            message = match_success_policy(
                (job.get("spec") or {}).get("successPolicy"), completions, succeeded
            )
            if message:
                return SUCCESS_POLICY, message
            return COMPLETIONS_REACHED if len(succeeded) >= completions and not ctx.active else None
        succeeded = (status.get("succeeded") or 0) + len(
            (status.get("uncountedTerminatedPods") or {}).get("succeeded") or ()
        )
        if completions is None:
            return COMPLETIONS_REACHED if succeeded > 0 and not ctx.active else None
        # Pods still running past the completions are deleted first (manageJob wants none active).
        return COMPLETIONS_REACHED if succeeded >= completions and not ctx.active else None

    def _succeeded_indexes(self, job: Object, status: Object, ctx: SyncContext) -> set[int]:
        """The completed indexes, with those of succeeded pods not yet counted."""
        completions = _completions(job) or 0
        indexes = parse_indexes(status.get("completedIndexes"), completions)
        pending = set((status.get("uncountedTerminatedPods") or {}).get("succeeded") or ())
        for pod in ctx.pods:
            if pod["metadata"].get("uid") in pending and pod_phase(pod) == "Succeeded":
                index = valid_index(pod, completions)
                if index != UNKNOWN_INDEX:
                    indexes.add(index)
        return indexes

    # ---- pods ----

    async def _manage(
        self, key: str, job: Object, ctx: SyncContext, status: Object, record: BackoffRecord
    ) -> int:
        """manageJob: creates or deletes pods toward the wanted number active; the change in active pods."""
        spec = job.get("spec") or {}
        parallelism = spec.get("parallelism")
        parallelism = parallelism if isinstance(parallelism, int) else 1
        completions = _completions(job)
        if _indexed(job):
            return await self._manage_indexed(key, job, ctx, status, record, parallelism, completions or 0)
        succeeded = (status.get("succeeded") or 0) + len(
            status["uncountedTerminatedPods"].get("succeeded") or ()
        )
        if completions is None:
            want = len(ctx.active) if succeeded > 0 else parallelism
        else:
            want = max(0, min(completions - succeeded, parallelism))
        if _only_replace_failed(job):
            want = max(0, want - ctx.terminating)
        diff = len(ctx.active) - want
        if diff > 0:
            doomed = rank_pods_for_deletion(ctx.active, [0] * len(ctx.active), self.clock())[:diff]
            return -await self._delete_pods(key, job, doomed[:MAX_POD_CREATE_DELETE_PER_SYNC], True)
        if diff < 0 and self._may_create(key, record):
            return await self._create_pods(
                key, job, [UNKNOWN_INDEX] * min(-diff, MAX_POD_CREATE_DELETE_PER_SYNC)
            )
        return 0

    async def _manage_indexed(
        self,
        key: str,
        job: Object,
        ctx: SyncContext,
        status: Object,
        record: BackoffRecord,
        parallelism: int,
        completions: int,
    ) -> int:
        succeeded = self._succeeded_indexes(job, status, ctx)
        done = succeeded | parse_indexes(status.get("failedIndexes"), completions)
        keep: dict[int, Object] = {}
        excess: list[Object] = []
        for pod in rank_pods_for_deletion(ctx.active, [0] * len(ctx.active), self.clock())[::-1]:
            index = valid_index(pod, completions)
            if index == UNKNOWN_INDEX or index in done or index in keep:
                excess.append(pod)  # no index, one already done (or failed), a duplicate: the best is kept
            else:
                keep[index] = pod
        want = min(parallelism, completions - len(done))
        if _only_replace_failed(job):
            want = max(0, want - ctx.terminating)
        if len(keep) > want:
            excess += sorted(keep.values(), key=lambda p: -valid_index(p, completions))[: len(keep) - want]
        if excess:
            return -await self._delete_pods(key, job, excess[:MAX_POD_CREATE_DELETE_PER_SYNC], True)
        missing = [i for i in range(completions) if i not in done and i not in keep]
        missing = missing[: max(0, min(want - len(keep), MAX_POD_CREATE_DELETE_PER_SYNC))]
        if missing and self._may_create(key, record):
            return await self._create_pods(key, job, missing, self._index_failures(job, ctx, completions))
        return 0

    def _index_failures(self, job: Object, ctx: SyncContext, completions: int) -> dict[int, int]:
        """With backoffLimitPerIndex: per index, how often it failed (getNewIndexFailureCounts), which its
        next pod carries in the job-index-failure-count annotation."""
        if not _per_index(job):
            return {}
        ignored = {p["metadata"].get("uid") for p in ctx.ignored}
        counts: dict[int, int] = {}
        for pod in ctx.pods:
            index = valid_index(pod, completions)
            if index == UNKNOWN_INDEX:
                continue
            failed = is_pod_failed(pod, job) and pod["metadata"].get("uid") not in ignored
            counts[index] = max(counts.get(index, 0), _index_failure_count(pod) + (1 if failed else 0))
        return counts

    def _may_create(self, key: str, record: BackoffRecord) -> bool:
        """Creates wait out the backoff of the failures since the last success; the key comes back then."""
        remaining = self._backoff_remaining(record)
        if remaining > 0:
            self.queue.add_after(key, remaining)
            return False
        return True

    def _pod_template(self, job: Object, index: int, failures: int | None = None) -> Object:
        template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
        meta = template.setdefault("metadata", {})
        meta["finalizers"] = [*(meta.get("finalizers") or ()), JOB_TRACKING_FINALIZER]
        if index != UNKNOWN_INDEX:
            meta["annotations"] = {**(meta.get("annotations") or {}), COMPLETION_INDEX: str(index)}
            if failures is not None:
                meta["annotations"][INDEX_FAILURE_COUNT] = str(failures)
            meta["labels"] = {**(meta.get("labels") or {}), COMPLETION_INDEX: str(index)}
            pod_spec = template.setdefault("spec", {})
            pod_spec["hostname"] = f"{job['metadata']['name']}-{index}"
            for container in [*(pod_spec.get("initContainers") or ()), *(pod_spec.get("containers") or ())]:
                _add_completion_index_env(container)
        return template

    async def _create_pods(
        self, key: str, job: Object, indexes: list[int], failures: dict[int, int] | None = None
    ) -> int:
        """Creates one pod per entry (its completion index, or UNKNOWN_INDEX), in slow-start batches."""
        self.expectations.expect_creations(key, len(indexes))
        ref = new_controller_ref(job, API_VERSION, KIND)
        created, failure, position = 0, None, 0
        for size in slow_start_batch(len(indexes)):
            batch, position = indexes[position : position + size], position + size
            results = await asyncio.gather(
                *(self._create_pod(job, ref, index, failures) for index in batch), return_exceptions=True
            )
            failures = [r for r in results if isinstance(r, BaseException)]
            created += size - len(failures)
            if failures:
                failure = failures[0]
                break
        for _ in range(len(indexes) - created):
            self.expectations.creation_observed(key)
        if failure is not None and not _namespace_terminating(failure):
            raise failure
        return created

    async def _create_pod(
        self, job: Object, ref: Object, index: int, failures: dict[int, int] | None
    ) -> Object:
        count = (failures or {}).get(index, 0) if _per_index(job) else None
        pod = pod_from_template(self._pod_template(job, index, count), job, ref)
        if index != UNKNOWN_INDEX:
            pod["metadata"]["generateName"] = _generate_name_with_index(job["metadata"]["name"], index)
        namespace = job["metadata"]["namespace"]
        try:
            created = await self.pod_control.pods(namespace).create(pod)
        except errors.StatusError as err:
            if not _namespace_terminating(err):
                self.recorder.event(job, WARNING, FAILED_CREATE_POD_REASON, f"Error creating: {err.message}")
            raise
        self.recorder.event(
            job, NORMAL, SUCCESSFUL_CREATE_POD_REASON, f"Created pod: {created['metadata']['name']}"
        )
        return created

    async def _delete_pods(self, key: str, job: Object, pods: list[Object], uncounted: bool = False) -> int:
        """Deletes the pods; how many are gone (a 404 counts). `uncounted` (deleteJobPods: suspended or
        excess pods): each loses its tracking finalizer first, so it is never counted as failed."""
        if not pods:
            return 0
        self.expectations.expect_deletions_of(key, [object_key(p) for p in pods])
        namespace = job["metadata"]["namespace"]

        async def delete(pod: Object) -> None:
            if uncounted and _has_finalizer(pod):
                await self._remove_finalizer(pod)
            await self.pod_control.delete_pod(namespace, pod["metadata"]["name"], job)

        results = await asyncio.gather(*(delete(p) for p in pods), return_exceptions=True)
        deleted, failure = 0, None
        for pod, result in zip(pods, results, strict=True):
            if isinstance(result, BaseException):
                self.expectations.deletion_of_observed(key, object_key(pod))
                if isinstance(result, errors.StatusError) and result.code == 404:
                    deleted += 1
                elif failure is None:
                    failure = result
            else:
                deleted += 1
        if failure is not None:
            raise failure
        return deleted

    async def _remove_finalizer(self, pod: Object) -> None:
        meta = pod["metadata"]
        patch = {
            "metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER], "uid": meta["uid"]}
        }
        try:
            await self.pod_control.pods(meta.get("namespace", "")).patch(
                meta["name"], patch, STRATEGIC_MERGE_PATCH
            )
        except errors.StatusError as err:
            if err.code not in (404, 409, 422):  # gone, or another pod of that name now
                raise

    # ---- tracking terminated pods ----

    async def _count_terminated(
        self, key: str, job: Object, ctx: SyncContext, final: Object | None, deleted: int
    ) -> None:
        """trackJobStatusAndRemoveFinalizers: the finalizers of the pods now in uncountedTerminatedPods (and
        of ignored ones) are removed; those done move into the counters; the terminal condition is written
        once nothing runs and nothing is left uncounted."""
        status = copy.deepcopy(job.get("status") or {})
        uncounted = status.setdefault("uncountedTerminatedPods", {})
        pending = set(uncounted.get("succeeded") or ()) | set(uncounted.get("failed") or ())
        by_uid = {p["metadata"].get("uid"): p for p in ctx.pods}
        ignored = {p["metadata"].get("uid") for p in ctx.ignored}
        # canRemoveFinalizer: a Job heading for a terminal condition lets all its pods go (those it deleted
        # and does not count as failed included); otherwise the counted and the ignored ones.
        removable = [
            p
            for p in ctx.pods
            if _has_finalizer(p) and (final is not None or p["metadata"].get("uid") in pending | ignored)
        ]
        released = await self._remove_finalizers(key, removable[:MAX_POD_CREATE_DELETE_PER_SYNC])
        done = {
            uid for uid in pending if uid not in by_uid or uid in released or not _has_finalizer(by_uid[uid])
        }
        completions = _completions(job) or 0
        completed = parse_indexes(status.get("completedIndexes"), completions)
        for name in ("succeeded", "failed"):
            uids = uncounted.get(name) or []
            counted = [uid for uid in uids if uid in done]
            uncounted[name] = [uid for uid in uids if uid not in done]
            if not uncounted[name]:
                del uncounted[name]
            if name == "failed":
                status["failed"] = (status.get("failed") or 0) + len(counted)
            elif _indexed(job):
                completed |= {
                    i
                    for uid in counted
                    if uid in by_uid
                    for i in [valid_index(by_uid[uid], completions)]
                    if i != UNKNOWN_INDEX
                }
            else:
                status["succeeded"] = (status.get("succeeded") or 0) + len(counted)
        if _indexed(job):
            status["succeeded"] = len(completed)
            status["completedIndexes"] = format_indexes(completed)
        for counter in ("succeeded", "failed"):
            _set_counter(status, counter, status.get(counter) or 0)
        if not status.get("completedIndexes"):
            status.pop("completedIndexes", None)
        if final is not None and not uncounted and deleted == 0 and not ctx.active and ctx.terminating == 0:
            self._finish(job, status, final)
        await self._write_status(job, status)

    async def _remove_finalizers(self, key: str, pods: list[Object]) -> set[str]:
        """The uids whose finalizer is now gone; the informer is expected to show them without it."""
        expected = self.finalizer_expectations.setdefault(key, set())
        uids = [p["metadata"]["uid"] for p in pods]
        expected.update(uids)
        results = await asyncio.gather(*(self._remove_finalizer(p) for p in pods), return_exceptions=True)
        released = set()
        for uid, result in zip(uids, results, strict=True):
            if isinstance(result, BaseException):
                expected.discard(uid)
                log.info("Job %s: removing the tracking finalizer of pod %s: %s", key, uid, result)
            else:
                released.add(uid)
        return released

    def _finish(self, job: Object, status: Object, final: Object) -> None:
        status.pop("active", None)
        _set_condition(status, final)
        if final["type"] == "Complete":
            status["completionTime"] = final["lastTransitionTime"]
            completions = _completions(job)
            if completions is not None and (status.get("succeeded") or 0) > completions:
                self.recorder.event(
                    job,
                    WARNING,
                    "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached",
                )
            self.recorder.event(job, NORMAL, "Completed", "Job completed")
        else:
            self.recorder.event(job, WARNING, final["reason"], final["message"])

    async def _write_status(self, job: Object, status: Object) -> Object:
        """Writes the status when it changed, with the Job's resourceVersion: a stale Job conflicts, and the
        key is synced again from a fresh one."""
        if status == (job.get("status") or {}):
            return job
        api = self.client.resource("batch", "v1", "jobs").namespace(job["metadata"]["namespace"])
        written = await api.update_status({**job, "status": status})
        self.written[object_key(written)] = written
        return written


def _resource_version(obj: Object) -> int:
    try:
        return int(obj["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _set_counter(status: Object, name: str, value: int) -> None:
    """active, succeeded and failed are omitted when zero (omitempty), as the server stores them."""
    if value:
        status[name] = value
    else:
        status.pop(name, None)


def _selector(job: Object) -> Any:
    return selector_from_label_selector((job.get("spec") or {}).get("selector"))


def _past_backoff_on_failure(job: Object, ctx: SyncContext) -> bool:
    """pastBackoffLimitOnFailure: with restartPolicy OnFailure, container restarts count as failures."""
    spec = job.get("spec") or {}
    if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    restarts = sum(
        int(s.get("restartCount") or 0)
        for pod in ctx.active
        for key in ("initContainerStatuses", "containerStatuses")
        for s in (pod.get("status") or {}).get(key) or ()
    )
    limit = spec.get("backoffLimit") or 0
    return restarts > 0 if limit == 0 else restarts >= limit


def _add_completion_index_env(container: Object) -> None:
    env = container.setdefault("env", [])
    if any(v.get("name") == COMPLETION_INDEX_ENV for v in env):
        return
    env.append(
        {
            "name": COMPLETION_INDEX_ENV,
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{COMPLETION_INDEX}']"}},
        }
    )


def _generate_name_with_index(name: str, index: int) -> str:
    """podGenerateNameWithIndex: `<job>-<index>-`, the Job's name cut so the random suffix fits."""
    appendix = f"-{index}-"
    prefix = name + appendix
    return (
        prefix
        if len(prefix) <= MAX_GENERATED_NAME_LENGTH
        else name[: MAX_GENERATED_NAME_LENGTH - len(appendix)] + appendix
    )


def _namespace_terminating(err: BaseException) -> bool:
    if not isinstance(err, errors.StatusError):
        return False
    return any(c.get("type") == "NamespaceTerminating" for c in (err.details or {}).get("causes") or ())
