"""What a simulated node reports: its registration (labels, capacity, addresses, nodeInfo), its status
conditions with kubelet's reasons and messages, its Lease in kube-node-lease, and the addresses its pods
get (a /24 per node)."""

from __future__ import annotations

import copy
import zlib
from datetime import UTC, datetime
from typing import Any

from .. import version
from ..api.core.kubelet import SIMULATED_NODE_ANNOTATION, SIMULATED_NODE_VALUE, is_simulated
from .pods import rfc3339

Object = dict[str, Any]
__all__ = ["is_simulated"]  # the simulator imports it from here
NODE_LEASE_NAMESPACE = "kube-node-lease"
NAME_PREFIX = "sim-node-"
KUBELET_PORT = 10250
CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "1Ti"}
# kubelet's node status setters: (type, status, reason, message) of a healthy node.
HEALTHY_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def node_name(index: int) -> str:
    return f"{NAME_PREFIX}{index}"


def node_index(name: str) -> int:
    """sim-node-<i>'s i; another adopted node gets a number of its own from its name (past the first 4096)."""
    suffix = name.removeprefix(NAME_PREFIX)
    if name.startswith(NAME_PREFIX) and suffix.isdigit() and int(suffix) < 4096:
        return int(suffix)
    return 4096 + zlib.crc32(name.encode()) % 4096


def internal_ip(name: str) -> str:
    index = node_index(name)
    return f"10.255.{index // 254}.{index % 254 + 1}"


def pod_cidr_base(name: str) -> str:
    """The first three octets of the node's pod /24 (10.64.0.0 to 10.95.255.0)."""
    index = node_index(name)
    return f"10.{64 + index // 256}.{index % 256}"


def new_node(name: str) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "simulated",
                "type": "kwok",
            },
            "annotations": {
                SIMULATED_NODE_ANNOTATION: SIMULATED_NODE_VALUE,
                "node.alpha.kubernetes.io/ttl": "0",
            },
        },
        "spec": {},
    }


def node_status(node: Object, now: float, heartbeat: bool) -> Object:
    """The node's status as its kubelet reports it: the healthy conditions (their transition times kept while
    the status stays; `heartbeat`: a new lastHeartbeatTime), capacity, addresses, nodeInfo."""
    name = node["metadata"]["name"]
    status = copy.deepcopy(node.get("status") or {})
    old = {c.get("type"): c for c in status.get("conditions") or []}
    stamp = rfc3339(now)
    conditions = []
    for kind, value, reason, message in HEALTHY_CONDITIONS:
        previous = old.get(kind) or {}
        same = previous.get("status") == value
        conditions.append(
            {
                "type": kind,
                "status": value,
                "lastHeartbeatTime": stamp
                if heartbeat or not same
                else previous.get("lastHeartbeatTime", stamp),
                "lastTransitionTime": previous.get("lastTransitionTime", stamp) if same else stamp,
                "reason": reason,
                "message": message,
            }
        )
    uid = (node.get("metadata") or {}).get("uid", "")
    status.update(
        capacity=dict(status.get("capacity") or CAPACITY),
        allocatable=dict(status.get("allocatable") or status.get("capacity") or CAPACITY),
        conditions=conditions,
        addresses=[
            {"type": "InternalIP", "address": internal_ip(name)},
            {"type": "Hostname", "address": name},
        ],
        daemonEndpoints={"kubeletEndpoint": {"Port": KUBELET_PORT}},
        nodeInfo={
            "machineID": uid.replace("-", ""),
            "systemUUID": uid,
            "bootID": "",
            "kernelVersion": "",
            "osImage": "Simulated",
            "containerRuntimeVersion": f"simulated://{version.GIT_VERSION}",
            "kubeletVersion": version.GIT_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    )
    return status


def without_heartbeats(status: Object) -> Object:
    """The status with the heartbeat times left out: what decides whether it changed."""
    conditions = [
        {k: v for k, v in c.items() if k != "lastHeartbeatTime"} for c in status.get("conditions") or []
    ]
    return {**status, "conditions": conditions}


def micro_time(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_lease(node: Object, now: float, duration: int) -> Object:
    name = node["metadata"]["name"]
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": NODE_LEASE_NAMESPACE,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"].get("uid", "")}
            ],
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": duration, "renewTime": micro_time(now)},
    }
