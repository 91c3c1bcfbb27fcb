"""A pod's QoS class (pkg/apis/core/helper/qos.GetPodQOS / ComputePodQOS)."""

from __future__ import annotations

from typing import Any

from .resources import parsed

Object = dict[str, Any]
COMPUTE = ("cpu", "memory")


def _nonzero(resources: Any) -> dict[str, Any]:
    return {name: value for name, value in parsed(resources).items() if name in COMPUTE and value.sign() != 0}


def compute_qos(spec: Object) -> str:
    """Guaranteed: every container limits cpu and memory, requests equal to limits; BestEffort: no
    requests nor limits on cpu or memory; Burstable otherwise. Pod-level resources take precedence."""
    pod_resources = spec.get("resources") if isinstance(spec.get("resources"), dict) else None
    containers = [c for key in ("containers", "initContainers") for c in spec.get(key) or [] if isinstance(c, dict)]
    sources = [pod_resources] if pod_resources and (pod_resources.get("requests") or pod_resources.get("limits")) \
        else [c.get("resources") or {} for c in containers]
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for resources in sources:
        req, lim = _nonzero(resources.get("requests")), _nonzero(resources.get("limits"))
        for name, value in req.items():
            requests[name] = requests.get(name, 0) + value.value
        for name, value in lim.items():
            limits[name] = limits.get(name, 0) + value.value
        if set(lim) != set(COMPUTE):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"
