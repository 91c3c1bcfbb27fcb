"""jobs and jobs/status (pkg/registry/batch/job): unless spec.manualSelector, the server generates the
selector and the pod template's labels from the Job's uid and name; spec changes bump the generation;
status is written only through /status. Nothing runs the Jobs here: creating their pods is the job
controller's work (kube-controller-manager), which this server does not include."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ...storage.factory import StorageFactory
from .defaults import decode_job
from .jobstatus import validate_job_status_update
from .jobvalidation import (
    CONTROLLER_UID,
    JOB_NAME,
    LEGACY_CONTROLLER_UID,
    LEGACY_JOB_NAME,
    validate_job,
    validate_job_update,
)
from .tables import JOB_TABLE
from .warnings import add_warnings, job_spec_warnings, name_warnings

Object = dict[str, Any]
GROUP = "batch"
INFO = ResourceInfo(GROUP, "v1", "jobs", "Job", "job", True, categories=("all",))


def generate_selector(job: Object) -> None:
    """generateSelector: the template gets the job-name and controller-uid labels (legacy and prefixed)
    unless it has them, and the selector matches the prefixed controller-uid."""
    meta, spec = job["metadata"], job["spec"]
    template = spec.setdefault("template", {})
    template_meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    template["metadata"] = template_meta
    template_labels = template_meta.get("labels") if isinstance(template_meta.get("labels"), dict) else {}
    template_meta["labels"] = template_labels
    for key in (LEGACY_JOB_NAME, JOB_NAME):
        template_labels.setdefault(key, meta.get("name", ""))
    for key in (LEGACY_CONTROLLER_UID, CONTROLLER_UID):
        template_labels.setdefault(key, meta.get("uid", ""))
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    spec["selector"] = selector
    match_labels = selector.get("matchLabels") if isinstance(selector.get("matchLabels"), dict) else {}
    selector["matchLabels"] = match_labels
    match_labels.setdefault(CONTROLLER_UID, meta.get("uid", ""))


def default_labels(job: Object) -> None:
    """SetDefaults_Job's labels rule, which Kubernetes applies whenever it decodes the stored Job: a Job
    without labels shows its template's (the generated ones included)."""
    meta, template_labels = job["metadata"], _template_labels(job)
    if template_labels and not meta.get("labels"):
        meta["labels"] = dict(template_labels)


def _updating(obj: Object) -> bool:
    """An update's object carries the stored resourceVersion; a new Job has none."""
    return bool((obj.get("metadata") or {}).get("resourceVersion"))


class JobStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True
    selectable_fields = ("status.successful",)
    orphan_by_default = True  # batch/v1's DefaultGarbageCollectionPolicy, kept for compatibility

    def default(self, obj: Object) -> None:
        decode_job(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        spec = obj.setdefault("spec", {})
        if not spec.get("manualSelector"):
            generate_selector(obj)
        default_labels(obj)
        obj["status"] = {}
        add_warnings(ctx, name_warnings(obj) + job_spec_warnings(spec, field.Path("spec")))

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        default_labels(obj)
        if obj["metadata"].get("generation") != old["metadata"].get("generation"):
            add_warnings(ctx, job_spec_warnings(obj.get("spec") or {}, field.Path("spec")))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        # On update the strategy's ValidateUpdate runs ValidateJob itself (validate_update below).
        return [] if _updating(obj) else validate_job(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        old_labels = _template_labels(old)
        prefixed = JOB_NAME in old_labels and CONTROLLER_UID in old_labels
        return validate_job(obj, prefixed) + validate_job_update(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["status.successful"] = str((obj.get("status") or {}).get("succeeded") or 0)
        return fields


def _template_labels(job: Object) -> dict[str, str]:
    return (((job.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}


class JobStatusStrategy(SubresourceStrategy):
    """jobStatusStrategy: the spec from the stored Job, only the status validated."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validate_job_status_update(obj, old)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=JobStatusStrategy(store.strategy))


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, JobStrategy(INFO), storage, "/registry/jobs", JOB_TABLE)
    return {"jobs": store, "jobs/status": status_rest(store)}

