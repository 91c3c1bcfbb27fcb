"""NodeInfo (framework.NodeInfo): a node with the pods bound or assumed on it and what they add up to,
the requested resources, the non-zero requests scoring uses and the host ports in use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .resources import Resource, allocatable, non_zero_request, pod_request

Object = dict[str, Any]
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def object_key(obj: Object) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else meta.get("name", "")


def host_ports(pod: Object) -> list[tuple[str, str, int]]:
    """The (hostIP, protocol, hostPort) each container port with a host port takes."""
    spec = pod.get("spec") or {}
    out = []
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for port in (container.get("ports") or []) if isinstance(container, dict) else []:
            if (
                not isinstance(port, dict)
                or not isinstance(port.get("hostPort"), int)
                or port["hostPort"] <= 0
            ):
                continue
            out.append(
                (
                    port.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP,
                    port.get("protocol") or "TCP",
                    port["hostPort"],
                )
            )
    return out


@dataclass
class PodInfo:
    """A pod with what it adds to its node, computed once."""

    pod: Object
    request: Resource
    non_zero: Resource
    ports: list[tuple[str, str, int]]

    @classmethod
    def of(cls, pod: Object) -> PodInfo:
        return cls(pod, pod_request(pod), non_zero_request(pod), host_ports(pod))

    @property
    def affinity(self) -> Object:
        affinity = (self.pod.get("spec") or {}).get("affinity")
        return affinity if isinstance(affinity, dict) else {}


@dataclass
class NodeInfo:
    node: Object | None = None
    pods: dict[str, PodInfo] = field(default_factory=dict)
    requested: Resource = field(default_factory=Resource)
    non_zero_requested: Resource = field(default_factory=Resource)
    allocatable: Resource = field(default_factory=Resource)
    used_ports: dict[tuple[str, str, int], int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return (self.node or {}).get("metadata", {}).get("name", "")

    @property
    def labels(self) -> dict[str, str]:
        labels = (self.node or {}).get("metadata", {}).get("labels")
        return labels if isinstance(labels, dict) else {}

    def set_node(self, node: Object) -> None:
        self.node = node
        self.allocatable = allocatable(node)

    def add_pod(self, info: PodInfo) -> None:
        key = object_key(info.pod)
        if key in self.pods:
            self.remove_pod(key)
        self.pods[key] = info
        self.requested.add(info.request)
        self.non_zero_requested.add(info.non_zero)
        for port in info.ports:
            self.used_ports[port] = self.used_ports.get(port, 0) + 1

    def remove_pod(self, key: str) -> PodInfo | None:
        info = self.pods.pop(key, None)
        if info is None:
            return None
        self.requested.add(info.request, -1)
        self.non_zero_requested.add(info.non_zero, -1)
        for port in info.ports:
            left = self.used_ports.get(port, 0) - 1
            if left > 0:
                self.used_ports[port] = left
            else:
                self.used_ports.pop(port, None)
        return info

    def port_conflicts(self, wanted: list[tuple[str, str, int]]) -> bool:
        """HostPortInfo.CheckConflict: the same protocol and port on the same IP, 0.0.0.0 meaning all."""
        for ip, protocol, port in wanted:
            for used_ip, used_protocol, used_port in self.used_ports:
                if used_port != port or used_protocol != protocol:
                    continue
                if DEFAULT_BIND_ALL_HOST_IP in (ip, used_ip) or ip == used_ip:
                    return True
        return False
