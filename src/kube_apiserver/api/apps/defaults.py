"""apps/v1 defaulting (pkg/apis/apps/v1/defaults.go and the generated SetObjectDefaults_*): the
workload's own defaults, then its pod template's (and a StatefulSet's claim templates')."""

from __future__ import annotations

from typing import Any

from ..core.podspec import default_pod_template_spec
from ..core.podspec.defaults import default_resource_list

Object = dict[str, Any]
ROLLING_UPDATE = "RollingUpdate"


def child(parent: Object, key: str) -> Object:
    """parent[key] as a dict, created when absent or null."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def default(parent: Object, key: str, value: Any) -> None:
    """A nil Go pointer (absent or null) takes the default."""
    if parent.get(key) is None:
        parent[key] = value


def _template(spec: Object) -> None:
    default_pod_template_spec(child(spec, "template"))


def default_deployment(obj: Object) -> None:
    """SetDefaults_Deployment."""
    spec = child(obj, "spec")
    default(spec, "replicas", 1)
    strategy = child(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
    if strategy["type"] == ROLLING_UPDATE:
        rolling = child(strategy, "rollingUpdate")
        default(rolling, "maxUnavailable", "25%")
        default(rolling, "maxSurge", "25%")
    default(spec, "revisionHistoryLimit", 10)
    default(spec, "progressDeadlineSeconds", 600)
    _template(spec)


def default_replica_set(obj: Object) -> None:
    """SetDefaults_ReplicaSet."""
    spec = child(obj, "spec")
    default(spec, "replicas", 1)
    _template(spec)


def default_daemon_set(obj: Object) -> None:
    """SetDefaults_DaemonSet."""
    spec = child(obj, "spec")
    strategy = child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
    if strategy["type"] == ROLLING_UPDATE:
        rolling = child(strategy, "rollingUpdate")
        default(rolling, "maxUnavailable", 1)
        default(rolling, "maxSurge", 0)
    default(spec, "revisionHistoryLimit", 10)
    _template(spec)


def default_stateful_set(obj: Object) -> None:
    """SetDefaults_StatefulSet (StatefulSetAutoDeletePVC is GA: the retention policy is defaulted)."""
    spec = child(obj, "spec")
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
        child(strategy, "rollingUpdate")
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == ROLLING_UPDATE and isinstance(rolling, dict):
        default(rolling, "partition", 0)
    policy = child(spec, "persistentVolumeClaimRetentionPolicy")
    for key in ("whenDeleted", "whenScaled"):
        if not policy.get(key):
            policy[key] = "Retain"
    default(spec, "replicas", 1)
    default(spec, "revisionHistoryLimit", 10)
    default(spec, "serviceName", "")  # json:"serviceName" has no omitempty
    _template(spec)
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            default_claim_template(claim)


def default_claim_template(claim: Object) -> None:
    """A volumeClaimTemplate as apps/v1 serves it: typed, with the PersistentVolumeClaim defaults."""
    claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"
    claim_spec = child(claim, "spec")
    default(claim_spec, "volumeMode", "Filesystem")
    resources = claim_spec.get("resources")
    if isinstance(resources, dict):
        for key in ("limits", "requests"):
            default_resource_list(resources.get(key))
    status = child(claim, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"
