"""What a pod requests and is limited to in total (k8s.io/component-helpers/resource PodRequests and
PodLimits): its containers summed, init containers as the peak they reach (sidecars running alongside),
pod-level resources taking precedence, overhead added."""

from __future__ import annotations

from typing import Any

from ....apimachinery import quantity
from ....apimachinery.quantity import Quantity
from .resources import parsed

Object = dict[str, Any]
ResourceList = dict[str, Quantity]
POD_LEVEL = ("cpu", "memory")
HUGE_PAGES = "hugepages-"


def _add(total: ResourceList, more: ResourceList) -> None:
    for name, value in more.items():
        total[name] = quantity.add(total[name], value) if name in total else value


def _max(total: ResourceList, other: ResourceList) -> None:
    for name, value in other.items():
        if name not in total or value.value > total[name].value:
            total[name] = value


def _maxed(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    _max(out, b)
    return out


def _resize_infeasible(pod: Object) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible" for c in conditions)


def _container_list(pod: Object, container: Object, key: str, statuses: dict[str, Object]) -> ResourceList:
    """A container's requests or limits; with in-place resize, what its status reports counts too."""
    own = parsed((container.get("resources") or {}).get(key))
    status = statuses.get(container.get("name", ""))
    if status is None or not isinstance(status.get("resources"), dict):
        return own
    actual = parsed(status["resources"].get(key))
    return actual if _resize_infeasible(pod) else _maxed(own, actual)


def _aggregate(pod: Object, key: str) -> ResourceList:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    statuses = {s.get("name", ""): s for s in status.get("containerStatuses") or [] if isinstance(s, dict)}
    init_statuses = {s.get("name", ""): s for s in status.get("initContainerStatuses") or [] if isinstance(s, dict)}
    total: ResourceList = {}
    for container in spec.get("containers") or []:
        _add(total, _container_list(pod, container, key, statuses))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in spec.get("initContainers") or []:
        if container.get("restartPolicy") == "Always":
            own = _container_list(pod, container, key, init_statuses)
            _add(total, own)
            _add(sidecars, own)
            during = dict(sidecars)
        else:
            during = dict(parsed((container.get("resources") or {}).get(key)))
            _add(during, sidecars)
        _max(init_peak, during)
    _max(total, init_peak)
    return total


def _pod_level(pod: Object, key: str) -> ResourceList:
    resources = (pod.get("spec") or {}).get("resources") or {}
    values = parsed(resources.get(key)) if isinstance(resources, dict) else {}
    return {n: v for n, v in values.items() if n in POD_LEVEL or n.startswith(HUGE_PAGES)}


def pod_requests(pod: Object, overhead: bool = True) -> ResourceList:
    """PodRequests."""
    total = _aggregate(pod, "requests")
    total.update(_pod_level(pod, "requests"))
    if overhead:
        _add(total, parsed((pod.get("spec") or {}).get("overhead")))
    return total


def pod_limits(pod: Object, overhead: bool = True) -> ResourceList:
    """PodLimits: overhead only adds to resources that have a limit."""
    total = _aggregate(pod, "limits")
    total.update(_pod_level(pod, "limits"))
    if overhead:
        for name, value in parsed((pod.get("spec") or {}).get("overhead")).items():
            if name in total:
                total[name] = quantity.add(total[name], value)
    return total


def container_aggregate(pod: Object, key: str) -> ResourceList:
    """The containers' total alone (LimitRanger's podRequests/podLimits: no pod-level values, no overhead)."""
    return _aggregate(pod, key)
