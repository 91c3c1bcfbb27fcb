"""ValidateJobUpdateStatus (pkg/apis/batch/validation) with the options the job status strategy of
v1.34 uses (JobManagedBy is on): a status written through jobs/status must be self-consistent, and a
check on a field runs only when the field changes, so a controller can repair an older status."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from .indexes import IndexesError, count_indexes, overlap_error

Object = dict[str, Any]
Path = field.Path
STATUS = Path("status")
COUNTERS = ("active", "succeeded", "failed", "ready", "terminating")
TERMINAL = ("Failed", "Complete", "FailureTarget")


def condition_true(job: Object, kind: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def finished(job: Object) -> bool:
    return condition_true(job, "Complete") or condition_true(job, "Failed")


def _changed(job: Object, old: Object) -> set[str]:
    """What the update changes, in the names of the checks that depend on it."""
    status, old_status = job.get("status") or {}, old.get("status") or {}
    changed = {key for key in ("completedIndexes", "failedIndexes", "active", "startTime", "completionTime",
                               "uncountedTerminatedPods") if status.get(key) != old_status.get(key)}
    for name, test in (("finished", finished), ("complete", lambda j: condition_true(j, "Complete")),
                       ("failed", lambda j: condition_true(j, "Failed")),
                       ("failureTarget", lambda j: condition_true(j, "FailureTarget"))):
        if test(job) != test(old):
            changed.add(name)
    return changed


def validate_job_status_update(job: Object, old: Object) -> field.ErrorList:
    """ValidateJobUpdateStatus: the metadata update, the status, and the transitions from the old one."""
    errs = validation.validate_object_meta_update(job.get("metadata") or {}, old.get("metadata") or {},
                                                  Path("metadata"))
    changed = _changed(job, old)
    errs += _counters(job) + _uncounted(job) + _conditions(job, changed) + _times(job, changed)
    errs += _indexes(job, changed)
    return errs + _transitions(job, old)


def _counters(job: Object) -> field.ErrorList:
    status = job.get("status") or {}
    return [e for key in COUNTERS if status.get(key) is not None
            for e in validation.validate_nonnegative_field(status[key], STATUS.child(key))]


def _uncounted(job: Object) -> field.ErrorList:
    uncounted = (job.get("status") or {}).get("uncountedTerminatedPods")
    if not isinstance(uncounted, dict):
        return []
    errs: field.ErrorList = []
    seen: set[str] = set()
    for key in ("succeeded", "failed"):
        for i, uid in enumerate(uncounted.get(key) or []):
            path = STATUS.child("uncountedTerminatedPods", key).index(i)
            if not uid:
                errs.append(field.invalid(path, uid, "must not be empty"))
            elif uid in seen:
                errs.append(field.duplicate(path, uid))
            seen.add(uid)
    return errs


def _conditions(job: Object, changed: set[str]) -> field.ErrorList:
    path, complete = STATUS.child("conditions"), condition_true(job, "Complete")
    errs: field.ErrorList = []
    if complete and condition_true(job, "Failed") and changed & {"complete", "failed"}:
        errs.append(field.invalid(path, field.OMIT_VALUE, "cannot set Complete=True and Failed=true conditions"))
    if complete and condition_true(job, "FailureTarget") and changed & {"complete", "failureTarget"}:
        errs.append(field.invalid(path, field.OMIT_VALUE,
                                  "cannot set Complete=True and FailureTarget=true conditions"))
    met = condition_true(job, "SuccessCriteriaMet")
    if met and condition_true(job, "Failed"):
        errs.append(field.invalid(path, field.OMIT_VALUE, "cannot set SuccessCriteriaMet=True and Failed=true "
                                                          "conditions"))
    if met and condition_true(job, "FailureTarget"):
        errs.append(field.invalid(path, field.OMIT_VALUE, "cannot set SuccessCriteriaMet=True and "
                                                          "FailureTarget=true conditions"))
    if (job.get("spec") or {}).get("successPolicy") is not None and not met and complete:
        errs.append(field.invalid(path, field.OMIT_VALUE, "cannot set Complete=True for Job with SuccessPolicy "
                                                          "unless SuccessCriteriaMet=True"))
    return errs


def _times(job: Object, changed: set[str]) -> field.ErrorList:
    status, complete, done = job.get("status") or {}, condition_true(job, "Complete"), finished(job)
    start, completion = status.get("startTime"), status.get("completionTime")
    errs: field.ErrorList = []
    if completion is not None and not complete and changed & {"complete", "completionTime"}:
        errs.append(field.invalid(STATUS.child("completionTime"), completion,
                                  "cannot set completionTime when there is no Complete=True condition"))
    if completion is None and complete and changed & {"complete", "completionTime"}:
        errs.append(field.required(STATUS.child("completionTime"), "completionTime is required for Complete jobs"))
    if start and completion and completion < start and changed & {"startTime", "completionTime"}:
        errs.append(field.invalid(STATUS.child("completionTime"), completion,
                                  "completionTime cannot be set before startTime"))
    if (status.get("active") or 0) > 0 and done and changed & {"finished", "active"}:
        errs.append(field.invalid(STATUS.child("active"), status["active"], "active>0 is invalid for finished job"))
    if start is None and done and changed & {"finished", "startTime"}:
        errs.append(field.required(STATUS.child("startTime"), "startTime is required for finished job"))
    uncounted = status.get("uncountedTerminatedPods") or {}
    if done and (uncounted.get("failed") or uncounted.get("succeeded")) and \
            changed & {"finished", "uncountedTerminatedPods"}:
        errs.append(field.invalid(STATUS.child("uncountedTerminatedPods"), uncounted,
                                  "uncountedTerminatedPods needs to be empty for finished job"))
    return errs


def _indexes(job: Object, changed: set[str]) -> field.ErrorList:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    completions, completed, failed = spec.get("completions"), status.get("completedIndexes") or "", \
        status.get("failedIndexes")
    errs: field.ErrorList = []
    if "completedIndexes" in changed and completions is not None:
        errs += _index_format(completed, completions, "completedIndexes")
    if "failedIndexes" in changed and completions is not None and spec.get("backoffLimitPerIndex") is not None \
            and failed is not None:
        errs += _index_format(failed, completions, "failedIndexes")
    if "completedIndexes" in changed and completed and spec.get("completionMode") != "Indexed":
        errs.append(field.invalid(STATUS.child("completedIndexes"), completed,
                                  "cannot set non-empty completedIndexes when non-indexed completion mode"))
    if "failedIndexes" in changed and spec.get("backoffLimitPerIndex") is None and failed is not None:
        errs.append(field.invalid(STATUS.child("failedIndexes"), failed,
                                  "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
    if changed & {"failedIndexes", "completedIndexes"} and completions is not None and failed is not None:
        why = overlap_error(completed, failed, completions)
        if why:
            errs.append(field.invalid(STATUS.child("failedIndexes"), failed, why))
    return errs


def _index_format(text: str, completions: int, key: str) -> field.ErrorList:
    try:
        count_indexes(text, completions)
    except IndexesError as err:
        return [field.invalid(STATUS.child(key), text, f"error parsing {key}: {err}")]
    return []


def _transitions(job: Object, old: Object) -> field.ErrorList:
    """ValidateJobStatusUpdate's checks against the old status."""
    status, old_status, spec = job.get("status") or {}, old.get("status") or {}, job.get("spec") or {}
    path = STATUS.child("conditions")
    errs = [field.invalid(path, field.OMIT_VALUE, f"cannot disable the terminal {kind}=True condition")
            for kind in TERMINAL if condition_true(old, kind) and not condition_true(job, kind)]
    if (status.get("failed") or 0) < (old_status.get("failed") or 0):
        errs.append(field.invalid(STATUS.child("failed"), status.get("failed") or 0,
                                  "cannot decrease the failed counter"))
    indexed = spec.get("completionMode") == "Indexed"
    if (not indexed or spec.get("completions") != spec.get("parallelism")) and \
            (status.get("succeeded") or 0) < (old_status.get("succeeded") or 0):
        errs.append(field.invalid(STATUS.child("succeeded"), status.get("succeeded") or 0,
                                  "cannot decrease the succeeded counter"))
    completion, old_completion = status.get("completionTime"), old_status.get("completionTime")
    if completion is not None and old_completion is not None and completion != old_completion:
        errs.append(field.invalid(STATUS.child("completionTime"), completion, "completionTime cannot be mutated"))
    start, old_start = status.get("startTime"), old_status.get("startTime")
    if old_start is not None and start != old_start and not spec.get("suspend"):
        errs.append(field.required(STATUS.child("startTime"), "startTime cannot be removed for unsuspended job"))
    met, old_met = condition_true(job, "SuccessCriteriaMet"), condition_true(old, "SuccessCriteriaMet")
    if old_met and not met:
        errs.append(field.invalid(path, field.OMIT_VALUE, "cannot disable the SuccessCriteriaMet=True condition"))
    if condition_true(old, "Complete") and not old_met and met:
        errs.append(field.invalid(path, field.OMIT_VALUE, "cannot set SuccessCriteriaMet=True for Job already has "
                                                          "Complete=true conditions"))
    return errs
