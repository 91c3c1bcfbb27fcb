"""The resource metrics client and the replica calculator of the horizontalpodautoscaling controller
(pkg/controller/podautoscaler/metrics and replica_calculator.go): pod usage read from metrics.k8s.io
through the loopback client (served only when an aggregated APIService provides it, as metrics-server
does), and the replica count that brings the pods' average back to the target, within the tolerance."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...apimachinery import errors
from ...apimachinery.labels import Selector
from ...apimachinery.quantity import QuantityError, parse
from ...client.rest import Client
from ..controller_utils import is_pod_ready

Object = dict[str, Any]
METRICS_GROUP, METRICS_VERSION = "metrics.k8s.io", "v1beta1"


class MetricsError(Exception):
    """What went wrong computing a proposal; the message is upstream's chain of wrapped errors."""


def _milli(value: Any) -> int:
    try:
        return parse(value).scaled(-3)
    except QuantityError:
        return 0


def milli_quantity(value: int) -> str:
    """resource.NewMilliQuantity(value, DecimalSI) printed."""
    return str(value // 1000) if value % 1000 == 0 else f"{value}m"


async def resource_metrics(
    client: Client, resource: str, namespace: str, selector: Selector, container: str = ""
) -> dict[str, int]:
    """GetResourceMetric: each pod's usage of the resource (milli units), summed over its containers (or
    the one named). A metrics API not served, or no metrics, is an error with upstream's message."""
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
    items = listed.get("items") or []
    if not items:
        raise MetricsError(
            f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API"
        )
    usage: dict[str, int] = {}
    for item in items:
        containers = [c for c in item.get("containers") or () if not container or c.get("name") == container]
        if container and not containers:
            continue
        name = (item.get("metadata") or {}).get("name", "")
        usage[name] = sum(_milli((c.get("usage") or {}).get(resource, "0")) for c in containers)
    return usage


@dataclass
class Proposal:
    replicas: int
    utilization: int  # percent of request (0 for a value target)
    raw_average: int  # milli units per pod


def _requests(pod: Object, resource: str, container: str) -> int:
    """The pod's request of the resource; MetricsError naming a container without one."""
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or ():
        if container and c.get("name") != container:
            continue
        request = ((c.get("resources") or {}).get("requests") or {}).get(resource)
        if request is None:
            raise MetricsError(
                f"missing request for {resource} in container {c.get('name', '')} of Pod "
                f"{pod['metadata'].get('name', '')}"
            )
        total += _milli(request)
    return total


def _group_pods(
    pods: list[Object], metrics: dict[str, int], resource: str
) -> tuple[set[str], set[str], set[str]]:
    """groupPods: the ready pods with metrics, the unready ones (cpu only: not Ready yet), those without
    metrics; pods being deleted or failed are ignored."""
    ready, unready, missing = set(), set(), set()
    for pod in pods:
        name = pod["metadata"].get("name", "")
        if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") == "Failed":
            continue
        if (pod.get("status") or {}).get("phase") == "Pending":
            unready.add(name)
        elif name not in metrics:
            missing.add(name)
        elif resource == "cpu" and not is_pod_ready(pod):
            unready.add(name)
        else:
            ready.add(name)
    return ready, unready, missing


def resource_replicas(
    current: int,
    target_utilization: int | None,
    target_average: int | None,
    resource: str,
    tolerance: float,
    pods: list[Object],
    metrics: dict[str, int],
    container: str = "",
) -> Proposal:
    """GetResourceReplicas (a utilization target, percent of request) or GetRawResourceReplicas (an
    average value target, milli units): ceil(ratio x pods with metrics), the missing pods assumed at the
    target's far side and the unready ones at zero when scaling up, no change within the tolerance."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    ready, unready, missing = _group_pods(pods, metrics, resource)
    by_name = {p["metadata"].get("name", ""): p for p in pods}
    used = {name: metrics[name] for name in ready}
    if not used:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    requests = (
        {name: _requests(by_name[name], resource, container) for name in ready | missing | unready}
        if target_utilization is not None
        else {}
    )

    def ratio_of(usage: dict[str, int]) -> tuple[float, int, int]:
        total = sum(usage.values())
        average = total // len(usage)
        if target_utilization is None:
            return total / (target_average * len(usage)) if target_average else 0.0, 0, average  # type: ignore[operator]
        request = sum(requests[n] for n in usage)
        if request == 0:
            raise MetricsError("no metrics returned matched known pods")
        utilization = int(total * 100 / request)
        return utilization / target_utilization, utilization, average

    ratio, utilization, average = ratio_of(used)
    if not unready and not missing:
        if abs(1.0 - ratio) <= tolerance:
            return Proposal(current, utilization, average)
        return Proposal(math.ceil(ratio * len(used)), utilization, average)
    scale_up_unready = bool(unready) and ratio > 1.0
    for name in missing:  # 0 when scaling up, the target when scaling down: the change is never overdone
        used[name] = 0 if ratio > 1.0 else _assumed_full(name, requests, target_utilization, target_average)
    if scale_up_unready:
        for name in unready:
            used[name] = 0
    new_ratio, _, _ = ratio_of(used)
    if abs(1.0 - new_ratio) <= tolerance or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return Proposal(current, utilization, average)
    replicas = math.ceil(new_ratio * len(used))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return Proposal(current, utilization, average)
    return Proposal(replicas, utilization, average)


def _assumed_full(
    name: str, requests: dict[str, int], target_utilization: int | None, target_average: int | None
) -> int:
    """A pod without metrics while scaling down counts as using exactly the target (upstream: 100% of
    its request for utilization, the target value otherwise)."""
    if target_utilization is not None:
        return requests.get(name, 0)
    return target_average or 0
