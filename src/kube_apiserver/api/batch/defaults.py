"""batch/v1 defaulting (pkg/apis/batch/v1/defaults.go and the generated SetObjectDefaults_Job /
SetObjectDefaults_CronJob): what every Job and CronJob gets when it is decoded."""

from __future__ import annotations

from typing import Any

from ..core.pod.strategy import decode_defaults
from ..core.podspec import default_pod_template_spec

Object = dict[str, Any]
MAX_INT32 = 2147483647


def _dict(parent: Object, key: str) -> Object:
    """parent[key] as a dict, created when absent (Go's non-pointer structs are always there)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def default_pod_failure_policy(spec: Object) -> None:
    """SetDefaults_PodFailurePolicyOnPodConditionsPattern: a pattern's status defaults to True."""
    policy = spec.get("podFailurePolicy")
    for rule in (policy.get("rules") or []) if isinstance(policy, dict) else []:
        for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"


def default_job_spec_template(spec: Object) -> None:
    """The type defaulters every JobSpec gets, in a Job or in a CronJob's jobTemplate."""
    template = _dict(spec, "template")
    _dict(template, "metadata")
    default_pod_template_spec(template)
    default_pod_failure_policy(spec)


def default_job(job: Object) -> None:
    """SetObjectDefaults_Job."""
    spec = _dict(job, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _default(spec, "parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    meta = _dict(job, "metadata")
    if template_labels and not meta.get("labels"):
        # Go assigns the template's map itself: the labels the strategy then generates into the
        # template (job-name, controller-uid) show in the Job's own labels too.
        meta["labels"] = template_labels
    _default(spec, "completionMode", "NonIndexed")
    _default(spec, "suspend", False)
    # JobPodReplacementPolicy is GA in v1.34.
    _default(spec, "podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") is not None
             else "TerminatingOrFailed")
    _default(spec, "manualSelector", False)
    default_job_spec_template(spec)


def default_cron_job(cron_job: Object) -> None:
    """SetObjectDefaults_CronJob (the jobTemplate's spec gets only the type defaulters, not SetDefaults_Job)."""
    spec = _dict(cron_job, "spec")
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    _default(spec, "suspend", False)
    _default(spec, "successfulJobsHistoryLimit", 3)
    _default(spec, "failedJobsHistoryLimit", 1)
    job_template = _dict(spec, "jobTemplate")
    _dict(job_template, "metadata")
    default_job_spec_template(_dict(job_template, "spec"))


def _default(spec: Object, key: str, value: Any) -> None:
    if spec.get(key) is None:
        spec[key] = value


def decode_job(job: Object) -> None:
    decode_defaults("Job", default_job, job)


def decode_cron_job(cron_job: Object) -> None:
    decode_defaults("CronJob", default_cron_job, cron_job)
