"""The columns `kubectl get jobs` and `kubectl get cronjobs` print (printJob, printCronJob in
pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

import datetime
from typing import Any

from ...apimachinery.clock import wall_now
from ...registry.rest import TableColumn
from ...registry.table import AGE, NAME, TableConvertor, age, human_duration, name
from ..networking.common import selector_text

Object = dict[str, Any]
CONTAINERS = TableColumn("Containers", "string", "", "Names of each container in the template.", 1)
IMAGES = TableColumn("Images", "string", "", "Images referenced by each container in the template.", 1)
SELECTOR = TableColumn("Selector", "string", "", "A label query over pods that should match the pod count. "
                       "Normally, the system sets this field for you. More info: https://kubernetes.io/docs/"
                       "concepts/overview/working-with-objects/labels/#label-selectors", 1)
TIME_ZONE_DOC = (
    "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. "
    "If not specified, this will default to the time zone of the kube-controller-manager process. The set of "
    "valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API "
    "server during CronJob validation and the controller manager during execution. If no system-wide time zone "
    "database can be found a bundled version of the database is used instead. If the time zone name becomes "
    "invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop "
    "creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can "
    "be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones")
JOB_STATUSES = (("Complete", "Complete"), ("Failed", "Failed"), (None, "Terminating"), ("Suspended", "Suspended"),
                ("FailureTarget", "FailureTarget"), ("SuccessCriteriaMet", "SuccessCriteriaMet"))


def _parse(stamp: str) -> datetime.datetime:
    return datetime.datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.UTC)


def _since(stamp: str) -> str:
    return human_duration((wall_now() - _parse(stamp)).total_seconds())


def container_cells(pod_spec: Object) -> list[str]:
    """layoutContainerCells: the containers' names and images, comma-separated."""
    containers = [c for c in pod_spec.get("containers") or [] if isinstance(c, dict)]
    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]


def _has_condition(status: Object, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def job_status(job: Object) -> str:
    status = job.get("status") or {}
    for kind, text in JOB_STATUSES:
        if kind is None and (job.get("metadata") or {}).get("deletionTimestamp"):
            return text
        if kind is not None and _has_condition(status, kind):
            return text
    return "Running"


def job_completions(job: Object) -> str:
    spec, succeeded = job.get("spec") or {}, (job.get("status") or {}).get("succeeded") or 0
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = spec.get("parallelism") or 0
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def job_duration(job: Object) -> str:
    status = job.get("status") or {}
    start, end = status.get("startTime"), status.get("completionTime")
    if not start:
        return ""
    if not end:
        return _since(start)
    return human_duration((_parse(end) - _parse(start)).total_seconds())


def _job_cells(job: Object) -> list[Any]:
    spec = job.get("spec") or {}
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    return [name(job), job_status(job), job_completions(job), job_duration(job), age(job),
            *container_cells(pod_spec), selector_text(spec.get("selector"))]


def _bool_pointer(value: Any) -> str:
    """printBoolPtr."""
    return "<unset>" if value is None else ("True" if value else "False")


def _cron_job_cells(cron_job: Object) -> list[Any]:
    spec, status = cron_job.get("spec") or {}, cron_job.get("status") or {}
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    last = status.get("lastScheduleTime")
    return [name(cron_job), spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            _bool_pointer(spec.get("suspend")), len(status.get("active") or []), _since(last) if last else "<none>",
            age(cron_job), *container_cells((job_spec.get("template") or {}).get("spec") or {}),
            selector_text(job_spec.get("selector"))]


JOB_TABLE = TableConvertor((
    NAME,
    TableColumn("Status", "string", "", "Status of the job."),
    TableColumn("Completions", "string", "", "The number of pods which reached phase Succeeded. The value "
                "increases monotonically for a given spec. However, it may decrease in reaction to scale down of "
                "elastic indexed jobs."),
    TableColumn("Duration", "string", "", "Time required to complete the job."),
    AGE, CONTAINERS, IMAGES, SELECTOR,
), _job_cells)

CRON_JOB_TABLE = TableConvertor((
    NAME,
    TableColumn("Schedule", "string", "", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    TableColumn("Timezone", "string", "", TIME_ZONE_DOC),
    TableColumn("Suspend", "boolean", "", "This flag tells the controller to suspend subsequent executions, it does "
                "not apply to already started executions.  Defaults to false."),
    TableColumn("Active", "integer", "", "A list of pointers to currently running jobs."),
    TableColumn("Last Schedule", "string", "", "Information when was the last time the job was successfully "
                "scheduled."),
    AGE, CONTAINERS, IMAGES, SELECTOR,
), _cron_job_cells)
