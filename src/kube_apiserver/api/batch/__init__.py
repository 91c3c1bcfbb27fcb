"""batch/v1: Job and CronJob, each with its status subresource. The API only: no job or cronjob
controller runs here (they belong to kube-controller-manager), so Jobs get no pods and CronJobs
create no Jobs on their own."""

from __future__ import annotations

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import cronjob, job  # noqa: F401

GROUP = job.GROUP


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    return APIGroupInfo(GROUP, {"v1": {**job.new_rest(storage), **cronjob.new_rest(storage)}})
