"""What the endpoint, endpointslice and endpointslicemirroring controllers share (pkg/controller/util/
endpoint and staging endpointslice/util): which pods a Service's endpoints list, the port a service port
resolves to on a pod, which Services a pod change concerns, and the last-change trigger time."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...apimachinery.labels import Selector, selector_from_set
from ..controller_utils import is_pod_ready, parse_time, pod_condition, pod_phase

Object = dict[str, Any]
LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
HEADLESS_LABEL = "service.kubernetes.io/headless"
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"


class PortNotFoundError(ValueError):
    pass


def service_selector(service: Object) -> Selector | None:
    """The Service's selector, or None for a selector-less Service (its endpoints are written by hand).
    An empty selector is not stored (omitempty), so it is selector-less too."""
    selector = (service.get("spec") or {}).get("selector")
    if not selector or not isinstance(selector, dict):
        return None
    return selector_from_set(selector)


def is_service_ip_set(service: Object) -> bool:
    cluster_ip = (service.get("spec") or {}).get("clusterIP") or ""
    return cluster_ip not in ("", "None")


def pod_ips(pod: Object) -> list[str]:
    """status.podIPs, or the single status.podIP of a status written without the list."""
    status = pod.get("status") or {}
    ips = [
        entry.get("ip") for entry in status.get("podIPs") or () if isinstance(entry, dict) and entry.get("ip")
    ]
    if not ips and status.get("podIP"):
        ips = [status["podIP"]]
    return ips


def is_ipv6(ip: str) -> bool:
    return ":" in ip


def should_pod_be_in_endpoints(pod: Object, include_terminating: bool) -> bool:
    """ShouldPodBeInEndpoints: not terminal, with an IP, and not being deleted unless terminating pods
    are wanted."""
    if pod_phase(pod) in ("Succeeded", "Failed"):
        return False
    if not pod_ips(pod):
        return False
    return include_terminating or not pod["metadata"].get("deletionTimestamp")


def should_set_hostname(pod: Object, service: Object) -> bool:
    spec = pod.get("spec") or {}
    return (
        bool(spec.get("hostname"))
        and spec.get("subdomain") == service["metadata"].get("name")
        and service["metadata"].get("namespace") == pod["metadata"].get("namespace")
    )


def find_port(pod: Object, service_port: Object) -> int:
    """podutil.FindPort: the targetPort itself, or the containerPort of the named port with the service
    port's protocol (in the containers, then the restartable init containers)."""
    target = service_port.get("targetPort")
    if target is None:
        target = service_port.get("port")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)  # an intstr written as a string of digits is still a number
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or ()), *sidecars]:
        for port in container.get("ports") or ():
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port.get("containerPort") or 0)
    raise PortNotFoundError(f"no suitable port for manifest: {pod['metadata'].get('uid', '')}")


def services_selecting(services: Iterable[Object], pod: Object) -> set[str]:
    """GetPodServiceMemberships: the keys of the Services (with a selector) whose selector matches the pod."""
    labels = pod["metadata"].get("labels") or {}
    keys = set()
    for service in services:
        selector = service_selector(service)
        if selector is not None and selector.matches(labels):
            keys.add(f"{service['metadata'].get('namespace', '')}/{service['metadata']['name']}")
    return keys


def _endpoint_projection(pod: Object) -> tuple[Any, ...]:
    """What of a pod its endpoints show (podEndpointsChanged compares the endpoints made from each)."""
    spec = pod.get("spec") or {}
    return (
        tuple(pod_ips(pod)),
        spec.get("nodeName"),
        spec.get("hostname"),
        spec.get("subdomain"),
        bool(pod["metadata"].get("deletionTimestamp")),
        is_pod_ready(pod),
        pod_phase(pod) in ("Succeeded", "Failed"),
        is_pod_serving(pod),
    )


def services_to_update_on_pod_change(services: list[Object], old: Object, new: Object) -> set[str]:
    """GetServicesToUpdateOnPodChange: a change of what the endpoints show concerns every Service of the
    pod, old and new; a label change alone only the Services it joined or left."""
    if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
        return set()
    pod_changed = _endpoint_projection(old) != _endpoint_projection(new)
    labels_changed = (old["metadata"].get("labels") or {}) != (new["metadata"].get("labels") or {})
    if not pod_changed and not labels_changed:
        return set()
    current = services_selecting(services, new)
    if not labels_changed:
        return current
    previous = services_selecting(services, old)
    return current | previous if pod_changed else current ^ previous


def is_pod_serving(pod: Object) -> bool:
    """The serving condition: the Ready condition, whether or not the pod is terminating."""
    return is_pod_ready(pod)


# ---- the last-change trigger time ----


def format_trigger_time(when: float) -> str:
    """time.RFC3339Nano in UTC: fractional seconds with trailing zeros dropped."""
    moment = datetime.fromtimestamp(when, UTC)
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"


def _pod_trigger_time(pod: Object) -> float | None:
    condition = pod_condition(pod, "Ready")
    return parse_time(condition.get("lastTransitionTime")) if condition else None


@dataclass
class _ServiceState:
    pod_times: dict[str, float] = field(default_factory=dict)
    service_time: float | None = None


class TriggerTimeTracker:
    """TriggerTimeTracker: the time of the earliest change (a pod's Ready transition, the Service's
    creation) not yet reflected in the Service's endpoints; None when nothing changed since last time."""

    def __init__(self) -> None:
        self._states: dict[str, _ServiceState] = {}

    def compute(self, key: str, service: Object, pods: list[Object]) -> float | None:
        state = self._states.get(key)
        known = state is not None
        state = state or _ServiceState()
        earliest: float | None = None
        pod_times: dict[str, float] = {}
        for pod in pods:
            when = _pod_trigger_time(pod)
            if when is None:
                continue
            name = pod["metadata"].get("name", "")
            pod_times[name] = when
            if when > state.pod_times.get(name, float("-inf")):
                earliest = when if earliest is None else min(earliest, when)
        created = parse_time(service["metadata"].get("creationTimestamp"))
        if created is not None and (state.service_time is None or created > state.service_time):
            earliest = created if earliest is None else min(earliest, created)
        self._states[key] = _ServiceState(pod_times, created)
        if not known:
            return created
        return earliest

    def delete(self, key: str) -> None:
        self._states.pop(key, None)
