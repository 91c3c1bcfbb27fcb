"""Nodes and pods as plain dicts, and NodeInfos holding them, for the plugin tests."""

from __future__ import annotations

from typing import Any

from kube_apiserver.scheduler.framework.nodeinfo import NodeInfo, PodInfo

Object = dict[str, Any]


def node(
    name: str,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict | None = None,
    taints: list | None = None,
    unschedulable: bool = False,
    **extra: str,
) -> Object:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **extra}
    obj: Object = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }
    if taints:
        obj["spec"]["taints"] = taints
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    return obj


def pod(
    name: str,
    cpu: str | None = None,
    memory: str | None = None,
    namespace: str = "default",
    labels: dict | None = None,
    node_name: str = "",
    **spec: Any,
) -> Object:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: Object = {"name": "c", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests}
    obj: Object = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels or {}},
        "spec": {"containers": [container], "schedulerName": "default-scheduler", **spec},
    }
    if node_name:
        obj["spec"]["nodeName"] = node_name
    return obj


def node_info(n: Object, *pods: Object) -> NodeInfo:
    info = NodeInfo()
    info.set_node(n)
    for p in pods:
        info.add_pod(PodInfo.of(p))
    return info
