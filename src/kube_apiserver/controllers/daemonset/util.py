"""What a DaemonSet's pods look like and where they belong (pkg/controller/daemon/util and the predicates
of daemon_controller.go): the tolerations the controller adds, the template labels (revision hash,
template generation), the node affinity pinning a pod to its node, which node a pod is meant for, whether
a node should run the daemon, and the surge and unavailability budgets."""

from __future__ import annotations

import copy
from typing import Any

from ...api.core.scheduling_helpers import required_node_affinity_matches, untolerated_taint
from ..deployment.util import scaled_value_from_int_or_percent

Object = dict[str, Any]
API_VERSION, KIND = "apps/v1", "DaemonSet"
UNIQUE_LABEL = "controller-revision-hash"  # DefaultDaemonSetUniqueLabelKey
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
OBJECT_NAME_FIELD = "metadata.name"

# AddOrUpdateDaemonPodTolerations: a daemon keeps running through these node conditions.
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def template_of(ds: Object) -> Object:
    return spec(ds).get("template") or {}


def min_ready_seconds(ds: Object) -> int:
    return int(spec(ds).get("minReadySeconds") or 0)


def template_generation(ds: Object) -> int | None:
    """GetTemplateGeneration: the deprecated annotation, None when absent or not an integer."""
    value = (ds["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _add_or_update_toleration(pod_spec: Object, toleration: Object) -> None:
    """AddOrUpdateTolerationInPodSpec: one with the same key, operator, value and effect is replaced."""
    tolerations = [t for t in pod_spec.get("tolerations") or () if isinstance(t, dict)]
    for i, existing in enumerate(tolerations):
        if all(
            (existing.get(k) or "") == (toleration.get(k) or "")
            for k in ("key", "operator", "value", "effect")
        ):
            tolerations[i] = toleration
            break
    else:
        tolerations.append(toleration)
    pod_spec["tolerations"] = tolerations


def add_daemon_tolerations(pod_spec: Object) -> None:
    wanted = list(DAEMON_TOLERATIONS) + ([NETWORK_UNAVAILABLE] if pod_spec.get("hostNetwork") else [])
    for key, effect in wanted:
        _add_or_update_toleration(pod_spec, {"key": key, "operator": "Exists", "effect": effect})


def create_pod_template(template: Object, generation: int | None, hash_value: str) -> Object:
    """CreatePodTemplate: the tolerations added, labelled with the template generation and revision hash."""
    new = copy.deepcopy(template)
    add_daemon_tolerations(new.setdefault("spec", {}))
    labels = new.setdefault("metadata", {}).setdefault("labels", {})
    if generation is not None:
        labels[TEMPLATE_GENERATION_LABEL] = str(generation)
    if hash_value:
        labels[UNIQUE_LABEL] = hash_value
    return new


def pin_to_node(pod_spec: Object, node_name: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes matchFields
    metadata.name In [node], so the scheduler binds the pod to that node only."""
    term = {"matchFields": [{"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node_name]}]}
    affinity = pod_spec.get("affinity")
    if not isinstance(affinity, dict):
        affinity = pod_spec["affinity"] = {}
    node_affinity = affinity.get("nodeAffinity")
    if not isinstance(node_affinity, dict):
        node_affinity = affinity["nodeAffinity"] = {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    else:
        required["nodeSelectorTerms"] = [term]


def target_node_name(pod: Object) -> str | None:
    """GetTargetNodeName: spec.nodeName, else the one node of its matchFields metadata.name In; None
    when it names none."""
    pod_spec = spec(pod)
    if pod_spec.get("nodeName"):
        return pod_spec["nodeName"]
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for requirement in (term or {}).get("matchFields") or ():
            if requirement.get("key") == OBJECT_NAME_FIELD and requirement.get("operator") == "In":
                values = requirement.get("values") or []
                return values[0] if len(values) == 1 else None
    return None


def is_pod_updated(pod: Object, hash_value: str, generation: int | None) -> bool:
    labels = pod["metadata"].get("labels") or {}
    template_matches = generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(generation)
    return bool(hash_value) and labels.get(UNIQUE_LABEL) == hash_value or template_matches


def new_pod(ds: Object, node_name: str) -> Object:
    """NewPod: the template's pod on the node, with the daemon tolerations (for the predicates)."""
    template = template_of(ds)
    pod_spec = copy.deepcopy(template.get("spec") or {})
    pod_spec["nodeName"] = node_name
    add_daemon_tolerations(pod_spec)
    return {"metadata": copy.deepcopy(template.get("metadata") or {}), "spec": pod_spec}


def node_should_run_daemon_pod(node: Object, ds: Object) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning). A node the template names otherwise, or
    whose labels its required affinity refuses, runs nothing; an untolerated NoSchedule taint keeps new
    pods off but lets a running one stay, an untolerated NoExecute one evicts it."""
    node_name = node["metadata"].get("name", "")
    wanted = spec(template_of(ds)).get("nodeName") or ""
    if wanted and wanted != node_name:
        return False, False
    pod = new_pod(ds, node_name)
    if not required_node_affinity_matches(pod, node):
        return False, False
    taints = [t for t in spec(node).get("taints") or () if isinstance(t, dict)]
    tolerations = [t for t in spec(pod).get("tolerations") or () if isinstance(t, dict)]
    if untolerated_taint(taints, tolerations) is None:
        return True, True
    return False, untolerated_taint(taints, tolerations, ("NoExecute",)) is None


def _rolling(ds: Object) -> Object | None:
    strategy = spec(ds).get("updateStrategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return None
    rolling = strategy.get("rollingUpdate")
    return rolling if isinstance(rolling, dict) else None


def surge_count(ds: Object, number_to_schedule: int) -> int:
    rolling = _rolling(ds)
    if rolling is None or rolling.get("maxSurge") is None:
        return 0
    return scaled_value_from_int_or_percent(rolling["maxSurge"], number_to_schedule, True)


def unavailable_count(ds: Object, number_to_schedule: int) -> int:
    rolling = _rolling(ds)
    if rolling is None:
        return 0
    return scaled_value_from_int_or_percent(rolling.get("maxUnavailable"), number_to_schedule, True)


def allows_surge(ds: Object) -> bool:
    try:
        return surge_count(ds, 1) != 0
    except ValueError:
        return False


def get_patch(ds: Object) -> Object:
    """getPatch: the revision's data, the template as a strategic merge patch replacing it."""
    template = copy.deepcopy(template_of(ds))
    template["$patch"] = "replace"
    return {"spec": {"template": template}}
