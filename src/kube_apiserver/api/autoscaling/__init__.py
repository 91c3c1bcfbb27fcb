"""autoscaling: HorizontalPodAutoscalers with their status, stored once as autoscaling/v2 (the
preferred version) and served at autoscaling/v2 and, converted, at autoscaling/v1. No HPA
controller runs here (kube-controller-manager's): nothing scales on these objects."""

from __future__ import annotations

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import hpa, v1  # noqa: F401

GROUP = hpa.GROUP


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    store = hpa.new_store(storage)
    status = hpa.status_rest(store)
    v2 = {"horizontalpodautoscalers": store, "horizontalpodautoscalers/status": status}
    return APIGroupInfo(GROUP, {"v2": v2, "v1": v1.new_rest(store, status)})
