"""The quota evaluator of pods (pkg/quota/v1/evaluator/core/pods.go): what a pod uses (its count; its
requests and limits while it is not terminal), which quota scopes it falls in, and the requests and limits
its containers must state when a quota limits cpu or memory."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from ....admission.interfaces import CREATE, UPDATE, Attributes
from ....admission.resourcequota import resources as rl
from ....admission.resourcequota.generic import Selector, object_count_name
from ....admission.resourcequota.resources import ResourceList
from ....apimachinery import labels, quantity
from ....apimachinery.clock import wall_now
from ...node.resources import is_extended, is_native
from ..podspec import compute_qos
from ..podspec.requests import pod_limits, pod_requests
from ..podspec.resources import parsed

Object = dict[str, Any]
POD_COUNT = object_count_name("", "pods")
POD_RESOURCES = (POD_COUNT, "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                 "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods")
POD_PREFIXES = ("hugepages-", "requests.hugepages-")
# Quotas on these require every container to state them (a backward-compatibility rule).
VALIDATION_SET = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
COMPUTE = (("cpu", "cpu", "requests.cpu", "limits.cpu"), ("memory", "memory", "requests.memory", "limits.memory"),
           ("ephemeral-storage", "ephemeral-storage", "requests.ephemeral-storage", "limits.ephemeral-storage"))
TERMINAL = ("Failed", "Succeeded")


def compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper."""
    result: ResourceList = {"pods": quantity.from_int(1)}
    for name, bare, request_name, limit_name in COMPUTE:
        if name in requests:
            result[bare] = result[request_name] = requests[name]
        if name in limits:
            result[limit_name] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            result[name] = result[f"requests.{name}"] = value
        if is_extended(name):
            result[f"requests.{name}"] = value
    return result


def _quota_extended(name: str) -> bool:
    return not is_native(name) and name.startswith("requests.")


def quota_v1_pod(pod: Object, now: datetime.datetime | None = None) -> bool:
    """QuotaV1Pod: a pod is charged until terminal, or past its deletion grace period."""
    if (pod.get("status") or {}).get("phase") in TERMINAL:
        return False
    meta = pod.get("metadata") or {}
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if stamp and grace is not None:
        deleted = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
        now = now or wall_now()
        if now > deleted + datetime.timedelta(seconds=grace):
            return False
    return True


def _terms(affinity: Object, key: str) -> list[Object]:
    rules = affinity.get(key) or {}
    required = rules.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    preferred = [t.get("podAffinityTerm") or {} for t in rules.get("preferredDuringSchedulingIgnoredDuringExecution")
                 or []]
    return [*required, *preferred]


def cross_namespace_affinity(pod: Object) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    terms = _terms(affinity, "podAffinity") + _terms(affinity, "podAntiAffinity")
    return any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms)


def _priority_class_matches(pod: Object, selector: Selector) -> bool:
    name = (pod.get("spec") or {}).get("priorityClassName") or ""
    if selector.get("operator") == "Exists":
        return bool(name)
    expression = {"key": "PriorityClass", "operator": selector.get("operator") or "",
                  "values": list(selector.get("values") or [])}
    try:
        chosen = labels.selector_from_label_selector({"matchExpressions": [expression]})
    except labels.SelectorParseError:
        return False
    return chosen.matches({"PriorityClass": name} if name else {})


def scope_matches(selector: Selector, pod: Object) -> bool:
    """podMatchesScopeFunc."""
    spec = pod.get("spec") or {}
    scope = selector.get("scopeName")
    if scope in ("Terminating", "NotTerminating"):
        deadline = spec.get("activeDeadlineSeconds")
        terminating = isinstance(deadline, int) and deadline >= 0
        return terminating == (scope == "Terminating")
    if scope in ("BestEffort", "NotBestEffort"):
        best_effort = ((pod.get("status") or {}).get("qosClass") or compute_qos(spec)) == "BestEffort"
        return best_effort == (scope == "BestEffort")
    if scope == "PriorityClass":
        return _priority_class_matches(pod, selector)
    if scope == "CrossNamespacePodAffinity":
        return cross_namespace_affinity(pod)
    return False


class PodEvaluator:
    group, resource = "", "pods"

    def constraints(self, required: list[str], obj: Object) -> str | None:
        """Every container must state the cpu and memory requests and limits quotas limit."""
        wanted = set(required) & VALIDATION_SET
        missing: dict[str, set[str]] = {}
        spec = obj.get("spec") or {}
        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            resources = container.get("resources") or {}
            usage = compute_usage(parsed(resources.get("requests")), parsed(resources.get("limits")))
            for name in wanted - set(usage):
                missing.setdefault(name, set()).add(container.get("name", ""))
        if not missing:
            return None
        return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}"
                                           for name in sorted(missing))

    def handles(self, attrs: Attributes) -> bool:
        if attrs.subresource not in ("", "resize"):
            return False
        return attrs.operation == CREATE or (attrs.subresource == "resize" and attrs.operation == UPDATE)

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        extra = [n for n in names if n.startswith(POD_PREFIXES) or _quota_extended(n)]
        return rl.intersection(names, POD_RESOURCES) + extra

    def scope_matches(self, selector: Selector, obj: Object) -> bool:
        return scope_matches(selector, obj)

    def usage(self, obj: Object) -> ResourceList:
        """PodUsageFunc: always its count; its compute resources while it is charged."""
        result: ResourceList = {POD_COUNT: quantity.from_int(1)}
        if not quota_v1_pod(obj):
            return result
        return rl.add(result, compute_usage(pod_requests(obj), pod_limits(obj)))
