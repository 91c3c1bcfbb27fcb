"""cronjobs and cronjobs/status (pkg/registry/batch/cronjob). A CronJob is stored and validated here;
creating its Jobs on schedule is the cronjob controller's work (kube-controller-manager), which this
server does not include."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ...storage.factory import StorageFactory
from .cronjobvalidation import validate_cron_job_create, validate_cron_job_update
from .defaults import decode_cron_job
from .tables import CRON_JOB_TABLE
from .warnings import add_warnings, job_spec_warnings, name_warnings

Object = dict[str, Any]
INFO = ResourceInfo("batch", "v1", "cronjobs", "CronJob", "cronjob", True, short_names=("cj",),
                    categories=("all",))
JOB_SPEC = field.Path("spec", "jobTemplate", "spec")
TZ_WARNING = ("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
              "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")


def _job_spec(cron_job: Object) -> Object:
    return ((cron_job.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}


class CronJobStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        decode_cron_job(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {}
        add_warnings(ctx, name_warnings(obj) + job_spec_warnings(_job_spec(obj), JOB_SPEC))

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        warnings = []
        if obj["metadata"].get("generation") != old["metadata"].get("generation"):
            warnings = job_spec_warnings(_job_spec(obj), JOB_SPEC)
        if "TZ" in ((obj.get("spec") or {}).get("schedule") or ""):
            warnings.append(TZ_WARNING)
        add_warnings(ctx, warnings)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        # On update the strategy's ValidateUpdate alone runs (validate_update below).
        return [] if (obj.get("metadata") or {}).get("resourceVersion") else validate_cron_job_create(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validate_cron_job_update(obj, old)


class CronJobStatusStrategy(SubresourceStrategy):
    """cronJobStatusStrategy: the spec from the stored CronJob; only the generic metadata checks."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=CronJobStatusStrategy(store.strategy))


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, CronJobStrategy(INFO), storage, "/registry/cronjobs", CRON_JOB_TABLE)
    return {"cronjobs": store, "cronjobs/status": status_rest(store)}
