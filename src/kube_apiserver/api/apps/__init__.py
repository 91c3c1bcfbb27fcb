"""apps/v1: deployments, replicasets, statefulsets, daemonsets (each with status; the first three with
an autoscaling/v1 Scale) and controllerrevisions.

This is the API only: nothing here creates ReplicaSets, Pods, PersistentVolumeClaims or
ControllerRevisions for a workload, and nothing writes its status. Those are the controllers of
kube-controller-manager, which talk to this server like any other client."""

from __future__ import annotations

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import controllerrevision, daemonset, deployment, replicaset, statefulset

GROUP = "apps"
__all__ = ["GROUP", "new_api_group_info"]


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    resources = {}
    for module in (deployment, replicaset, statefulset, daemonset, controllerrevision):
        resources.update(module.new_rest(storage))
    return APIGroupInfo(GROUP, {"v1": resources})
