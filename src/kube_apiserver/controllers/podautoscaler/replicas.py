"""The resource metrics client and the replica calculator of the horizontalpodautoscaling controller
(pkg/controller/podautoscaler/metrics and replica_calculator.go): pod usage read from metrics.k8s.io
through the loopback client (served only when an aggregated APIService provides it, as metrics-server
does), and the replica count that brings the pods' average back to the target, within the tolerance:
pods being deleted or failed are ignored, pending and (for CPU) not yet ready ones count as idle when
scaling up, pods without metrics as idle when scaling up and at the target when scaling down."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...apimachinery import errors
from ...apimachinery.clock import wall_time
from ...apimachinery.goduration import parse_duration
from ...apimachinery.labels import Selector
from ...apimachinery.quantity import QuantityError, parse
from ...client.rest import Client
from ..controller_utils import parse_time, pod_condition

Object = dict[str, Any]
METRICS_GROUP, METRICS_VERSION = "metrics.k8s.io", "v1beta1"


class MetricsError(Exception):
    """What went wrong computing a proposal; the message is upstream's chain of wrapped errors."""


@dataclass
class PodMetric:
    value: int  # milli units
    timestamp: float = 0.0
    window: float = 0.0


def milli(value: Any) -> int:
    """MilliValue of a quantity; 0 for one that does not parse."""
    try:
        return parse(value).scaled(-3)
    except QuantityError:
        return 0


def milli_quantity(value: int) -> str:
    """resource.NewMilliQuantity(value, DecimalSI) printed."""
    return str(value // 1000) if value % 1000 == 0 else f"{value}m"


def _window(item: Object) -> float:
    try:
        return parse_duration(str(item.get("window") or "0s"))
    except ValueError:
        return 0.0


async def resource_metrics(
    client: Client, resource: str, namespace: str, selector: Selector, container: str = ""
) -> dict[str, PodMetric]:
    """GetResourceMetric: each pod's usage of the resource, summed over its containers (or the one named).
    A metrics API not served, or no metrics, is an error with upstream's message."""
    pods = client.resource(METRICS_GROUP, METRICS_VERSION, "pods").namespace(namespace)
    try:
        listed = await pods.list(labelSelector=str(selector))
    except errors.StatusError as err:
        message = err.message
        if err.code == 404:  # what client-go says of a 404 it cannot decode as a metrics Status
            message = "the server could not find the requested resource (get pods.metrics.k8s.io)"
        raise MetricsError(
            f"unable to get metrics for resource {resource}: unable to fetch metrics from resource "
            f"metrics API: {message}"
        ) from None
    items = [i for i in listed.get("items") or () if isinstance(i, dict)]
    if not items:
        raise MetricsError(
            f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API"
        )
    usage: dict[str, PodMetric] = {}
    for item in items:
        containers = [c for c in item.get("containers") or () if not container or c.get("name") == container]
        if container and not containers:
            continue  # a pod without that container has no metric for it
        name = (item.get("metadata") or {}).get("name", "")
        total = sum(milli((c.get("usage") or {}).get(resource, "0")) for c in containers)
        usage[name] = PodMetric(total, parse_time(item.get("timestamp")) or 0.0, _window(item))
    return usage


@dataclass(frozen=True)
class Timing:
    """--horizontal-pod-autoscaler-cpu-initialization-period and -initial-readiness-delay, and now."""

    cpu_initialization_period: float = 300.0
    initial_readiness_delay: float = 30.0
    now: float = 0.0


@dataclass
class Groups:
    ready: int
    unready: set[str]
    missing: set[str]
    ignored: set[str]


def _cpu_unready(pod: Object, metric: PodMetric, timing: Timing) -> bool:
    """A CPU sample not to trust: the pod not ready within its initialization period, or its sample
    taken before a window passed since it became ready; later, a pod that never became ready."""
    ready = pod_condition(pod, "Ready")
    started = parse_time((pod.get("status") or {}).get("startTime"))
    if ready is None or started is None:
        return True
    transition = parse_time(ready.get("lastTransitionTime")) or 0.0
    if started + timing.cpu_initialization_period > timing.now:
        return ready.get("status") == "False" or metric.timestamp < transition + metric.window
    return ready.get("status") == "False" and started + timing.initial_readiness_delay > transition


def group_pods(pods: list[Object], metrics: dict[str, PodMetric], resource: str, timing: Timing) -> Groups:
    """groupPods."""
    groups = Groups(0, set(), set(), set())
    for pod in pods:
        name = pod["metadata"].get("name", "")
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            groups.ignored.add(name)
        elif phase == "Pending":
            groups.unready.add(name)
        elif name not in metrics:
            groups.missing.add(name)
        elif resource == "cpu" and _cpu_unready(pod, metrics[name], timing):
            groups.unready.add(name)
        else:
            groups.ready += 1
    return groups


def calculate_requests(pods: list[Object], container: str, resource: str) -> dict[str, int]:
    """calculateRequests: each pod's request of the resource over its containers (and restartable init
    containers); MetricsError naming a container without one."""
    requests = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        containers = list(spec.get("containers") or ())
        containers += [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
        total = 0
        for c in containers:
            if container and c.get("name") != container:
                continue
            request = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if request is None:
                raise MetricsError(
                    f"missing request for {resource} in container {c.get('name', '')} of Pod "
                    f"{pod['metadata'].get('name', '')}"
                )
            total += milli(request)
        requests[pod["metadata"].get("name", "")] = total
    return requests


def utilization_ratio(
    metrics: dict[str, PodMetric], requests: dict[str, int], target: int
) -> tuple[float, int, int]:
    """GetResourceUtilizationRatio: (ratio to the target, utilization percent, average raw value)."""
    used = [(m.value, requests[name]) for name, m in metrics.items() if name in requests]
    request_total = sum(r for _, r in used)
    if request_total == 0:
        raise MetricsError("no metrics returned matched known pods")
    metrics_total = sum(v for v, _ in used)
    utilization = int(metrics_total * 100 / request_total)
    return utilization / target, utilization, metrics_total // len(used)


def usage_ratio(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """GetMetricUsageRatio: (average / target, average)."""
    average = sum(m.value for m in metrics.values()) // len(metrics)
    return average / target, average


@dataclass
class Proposal:
    replicas: int
    utilization: int  # percent of request (0 for a value target)
    raw_average: int  # milli units per pod


def resource_replicas(
    current: int,
    target_utilization: int | None,
    target_average: int | None,
    resource: str,
    tolerance: float,
    pods: list[Object],
    metrics: dict[str, PodMetric],
    container: str = "",
    timing: Timing | None = None,
) -> Proposal:
    """GetResourceReplicas (a utilization target, percent of request) or GetRawResourceReplicas (an
    average value target, milli units)."""
    timing = timing or Timing(now=wall_time())
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    groups = group_pods(pods, metrics, resource, timing)
    metrics = {n: m for n, m in metrics.items() if n not in groups.ignored and n not in groups.unready}
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    if target_utilization is not None:
        requests = calculate_requests(pods, container, resource)

        def ratio_of(m: dict[str, PodMetric]) -> tuple[float, int, int]:
            return utilization_ratio(m, requests, target_utilization)

        fallback = {n: requests.get(n, 0) * max(100, target_utilization) // 100 for n in groups.missing}
    else:
        target = max(target_average or 0, 1)

        def ratio_of(m: dict[str, PodMetric]) -> tuple[float, int, int]:
            ratio, average = usage_ratio(m, target)
            return ratio, 0, average

        fallback = {n: target for n in groups.missing}
    ratio, utilization, average = ratio_of(metrics)
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if abs(1.0 - ratio) <= tolerance:
            return Proposal(current, utilization, average)
        return Proposal(math.ceil(ratio * groups.ready), utilization, average)
    for name in groups.missing:  # at the target when scaling down, idle when scaling up
        if ratio < 1.0:
            metrics[name] = PodMetric(fallback[name])
        elif ratio > 1.0 or target_utilization is None:
            metrics[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in groups.unready:
            metrics[name] = PodMetric(0)
    new_ratio = ratio_of(metrics)[0]
    if abs(1.0 - new_ratio) <= tolerance or ratio < 1.0 < new_ratio or ratio > 1.0 > new_ratio:
        return Proposal(current, utilization, average)  # too small a change, or the direction would flip
    replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return Proposal(current, utilization, average)
    return Proposal(replicas, utilization, average)
