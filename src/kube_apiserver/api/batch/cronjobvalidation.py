"""ValidateCronJobCreate and ValidateCronJobUpdate (pkg/apis/batch/validation): the schedule, the time
zone, the concurrency policy and the job template."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ..core.podspec import PodValidationOptions
from ..policy.poddisruptionbudget import selector_struct
from .cron import CronError, parse_standard
from .jobspec import validate_job_spec_common
from .timezone import validate_time_zone

Object = dict[str, Any]
Path = field.Path
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
# The cronjob controller appends an 11-character suffix to the name of the Jobs it creates.
MAX_NAME_LENGTH = 63 - 11


def validate_cron_job_create(cron_job: Object) -> field.ErrorList:
    meta = cron_job.get("metadata") or {}
    errs = validation.validate_object_meta(meta, True, validation.name_is_dns_subdomain, Path("metadata"))
    errs += validate_cron_job_spec(cron_job.get("spec") or {}, None, Path("spec"))
    name = meta.get("name") or ""
    if len(name) > MAX_NAME_LENGTH:
        errs.append(field.invalid(Path("metadata", "name"), name, f"must be no more than {MAX_NAME_LENGTH} characters"))
    return errs


def validate_cron_job_update(cron_job: Object, old: Object) -> field.ErrorList:
    """Names longer than 52 characters stay updatable (and deletable)."""
    errs = validation.validate_object_meta_update(cron_job.get("metadata") or {}, old.get("metadata") or {},
                                                  Path("metadata"))
    return errs + validate_cron_job_spec(cron_job.get("spec") or {}, old.get("spec") or {}, Path("spec"))


def validate_cron_job_spec(spec: Object, old: Object | None, path: Path) -> field.ErrorList:
    schedule = spec.get("schedule") or ""
    errs: field.ErrorList = []
    if not schedule:
        errs.append(field.required(path.child("schedule"), ""))
    else:
        allow_tz = old is not None and "TZ" in (old.get("schedule") or "")
        errs += validate_schedule(schedule, allow_tz, spec.get("timeZone"), path.child("schedule"))
    if spec.get("startingDeadlineSeconds") is not None:
        errs += validation.validate_nonnegative_field(spec["startingDeadlineSeconds"],
                                                      path.child("startingDeadlineSeconds"))
    if old is None or old.get("timeZone") != spec.get("timeZone"):
        errs += validate_time_zone(spec.get("timeZone"), path.child("timeZone"))
    errs += _concurrency_policy(spec.get("concurrencyPolicy") or "", path.child("concurrencyPolicy"))
    errs += validate_job_template(spec.get("jobTemplate") or {}, path.child("jobTemplate"))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.get(key) is not None:
            errs += validation.validate_nonnegative_field(spec[key], path.child(key))
    return errs


def validate_schedule(schedule: str, allow_tz: bool, time_zone: str | None, path: Path) -> field.ErrorList:
    """validateScheduleFormat."""
    errs: field.ErrorList = []
    try:
        parse_standard(schedule)
    except CronError as err:
        errs.append(field.invalid(path, schedule, str(err)))
    if allow_tz and "TZ" in schedule and time_zone is not None:
        errs.append(field.invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not allow_tz and "TZ" in schedule:
        errs.append(field.invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return errs


def _concurrency_policy(policy: str, path: Path) -> field.ErrorList:
    if not policy:
        return [field.required(path, "")]
    if policy not in CONCURRENCY_POLICIES:
        return [field.not_supported(path, policy, CONCURRENCY_POLICIES)]
    return []


def validate_job_template(template: Object, path: Path) -> field.ErrorList:
    """ValidateJobTemplateSpec: the cronjob controller generates the selector of every Job it creates."""
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    errs = validate_job_spec_common(spec, path.child("spec"), PodValidationOptions())
    if spec.get("selector") is not None:
        errs.append(field.invalid(path.child("spec", "selector"), selector_struct(spec["selector"]),
                                  "`selector` will be auto-generated"))
    if spec.get("manualSelector"):
        errs.append(field.not_supported(path.child("spec", "manualSelector"), True, ("nil", "false")))
    return errs
