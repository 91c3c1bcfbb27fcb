"""What a pod asks of a node and what a node offers, as the scheduler counts them (framework.Resource):
milli-CPU, bytes of memory and ephemeral storage, a pod count, and the scalar resources (extended
resources, hugepages, attachable volumes) by name. Malformed quantities count as absent, never raise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...api.core.podspec.requests import pod_requests
from ...api.core.podspec.resources import parsed
from ...apimachinery.quantity import Quantity

Object = dict[str, Any]
CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
DEFAULT_MILLI_CPU_REQUEST = 100  # what a container without a cpu request counts as when scoring
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def is_scalar_resource_name(name: str) -> bool:
    """IsScalarResourceName: extended resources and prefixed native ones (any domain), hugepages,
    attachable volumes."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    return "/" in name and not name.startswith("requests.")


@dataclass
class Resource:
    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pods: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * value

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or any(self.scalar.values()))


def resource_from_list(values: dict[str, Quantity]) -> Resource:
    out = Resource()
    for name, value in values.items():
        if name == CPU:
            out.milli_cpu = value.scaled(-3)
        elif name == MEMORY:
            out.memory = value.scaled(0)
        elif name == EPHEMERAL_STORAGE:
            out.ephemeral_storage = value.scaled(0)
        elif name == PODS:
            out.allowed_pods = value.scaled(0)
        elif is_scalar_resource_name(name):
            out.scalar[name] = value.scaled(0)
    return out


def allocatable(node: Object) -> Resource:
    status = node.get("status") or {}
    values = status.get("allocatable")
    return resource_from_list(parsed(values if isinstance(values, dict) else status.get("capacity")))


def pod_request(pod: Object) -> Resource:
    """PodRequests: containers summed, init containers at their peak, pod overhead added."""
    return resource_from_list(pod_requests(pod))


def _with_default_requests(container: Any) -> Any:
    if not isinstance(container, dict):
        return container
    resources = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    requests = dict(resources.get("requests") or {}) if isinstance(resources.get("requests"), dict) else {}
    requests.setdefault(CPU, f"{DEFAULT_MILLI_CPU_REQUEST}m")
    requests.setdefault(MEMORY, str(DEFAULT_MEMORY_REQUEST))
    return {**container, "resources": {**resources, "requests": requests}}


def non_zero_request(pod: Object) -> Resource:
    """The cpu and memory a pod counts for when scoring: a container that requests none counts as
    100m and 200Mi (NonMissingContainerRequests), so empty pods do not all pile onto one node."""
    spec = pod.get("spec") or {}
    defaulted = {
        **pod,
        "spec": {
            **spec,
            "containers": [_with_default_requests(c) for c in spec.get("containers") or []],
            "initContainers": [_with_default_requests(c) for c in spec.get("initContainers") or []],
        },
    }
    total = pod_request(defaulted)
    return Resource(milli_cpu=total.milli_cpu, memory=total.memory)
