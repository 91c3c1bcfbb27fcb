"""deployment_util.go: the revision and replica annotations, the conditions, max surge and unavailable,
the pod-template-hash, which ReplicaSet is the new one, the replica counts, and when a rollout is
complete, progressing or timed out. Deployments and ReplicaSets are plain dicts as the API serves them."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable
from functools import cmp_to_key
from typing import Any

from ...apimachinery.meta import now_rfc3339
from ..controller_utils import parse_time

Object = dict[str, Any]

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED_CONFIG_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"

ROLLBACK_REVISION_NOT_FOUND = "DeploymentRollbackRevisionNotFound"
ROLLBACK_TEMPLATE_UNCHANGED = "DeploymentRollbackTemplateUnchanged"
ROLLBACK_DONE = "DeploymentRollback"
REPLICA_SET_UPDATED_REASON = "ReplicaSetUpdated"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
NEW_REPLICA_SET_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
PAUSED_DEPLOY_REASON = "DeploymentPaused"
RESUMED_DEPLOY_REASON = "DeploymentResumed"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

PROGRESSING = "Progressing"
AVAILABLE = "Available"
REPLICA_FAILURE = "ReplicaFailure"
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
MAX_INT32 = 2**31 - 1

# Annotations a Deployment does not copy to its ReplicaSets (nor takes back from one on rollback).
_ANNOTATIONS_TO_SKIP = frozenset(
    {
        LAST_APPLIED_CONFIG_ANNOTATION,
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        DEPRECATED_ROLLBACK_TO,
    }
)
# rand.SafeEncodeString's alphabet: no vowels (no words) and no 0, 1, 3 (not mistaken for letters).
_SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


# ---- accessors ----


def spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def status(obj: Object) -> Object:
    return obj.get("status") or {}


def annotations(obj: Object) -> dict[str, str]:
    return obj["metadata"].get("annotations") or {}


def replicas(obj: Object) -> int:
    """spec.replicas (defaulted to 1 by the API; nil only in objects that never went through it)."""
    value = spec(obj).get("replicas")
    return 1 if value is None else int(value)


def status_int(obj: Object | None, name: str) -> int:
    return int(status(obj).get(name) or 0) if obj is not None else 0


def strategy_type(d: Object) -> str:
    return (spec(d).get("strategy") or {}).get("type") or ""


def is_rolling_update(d: Object) -> bool:
    return strategy_type(d) == ROLLING_UPDATE


def has_progress_deadline(d: Object) -> bool:
    deadline = spec(d).get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


def has_revision_history_limit(d: Object) -> bool:
    limit = spec(d).get("revisionHistoryLimit")
    return limit is not None and limit != MAX_INT32


# ---- conditions ----


def new_condition(condition_type: str, condition_status: str, reason: str, message: str) -> Object:
    now = now_rfc3339()
    return {
        "type": condition_type,
        "status": condition_status,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def get_condition(deployment_status: Object, condition_type: str) -> Object | None:
    for condition in deployment_status.get("conditions") or ():
        if condition.get("type") == condition_type:
            return condition
    return None


def set_condition(deployment_status: Object, condition: Object) -> None:
    """SetDeploymentCondition: replaces the condition of that type unless status and reason are unchanged
    (then nothing, not even the message, changes); the transition time stays while the status does."""
    current = get_condition(deployment_status, condition["type"])
    if (
        current is not None
        and current.get("status") == condition["status"]
        and current.get("reason") == condition["reason"]
    ):
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    deployment_status["conditions"] = [*_without(deployment_status, condition["type"]), condition]


def remove_condition(deployment_status: Object, condition_type: str) -> None:
    deployment_status["conditions"] = _without(deployment_status, condition_type)


def _without(deployment_status: Object, condition_type: str) -> list[Object]:
    return [c for c in deployment_status.get("conditions") or () if c.get("type") != condition_type]


def replica_set_to_deployment_condition(condition: Object) -> Object:
    return {
        "type": condition.get("type"),
        "status": condition.get("status"),
        "lastUpdateTime": condition.get("lastTransitionTime"),
        "lastTransitionTime": condition.get("lastTransitionTime"),
        "reason": condition.get("reason"),
        "message": condition.get("message"),
    }


# ---- revisions ----


def revision(obj: Object) -> int:
    """The revision annotation (0 when absent); ValueError when it is not an integer."""
    value = annotations(obj).get(REVISION_ANNOTATION)
    return 0 if value is None else int(value, 10)


def _revision_or_none(obj: Object) -> int | None:
    try:
        return revision(obj)
    except ValueError:
        return None  # skipped, as upstream logs and skips it


def max_revision(sets: Iterable[Object]) -> int:
    return max((v for v in map(_revision_or_none, sets) if v is not None), default=0)


def last_revision(sets: Iterable[Object]) -> int:
    """The second highest revision: what a rollback without a revision goes back to."""
    highest = second = 0
    for value in map(_revision_or_none, sets):
        if value is None:
            continue
        if value >= highest:
            highest, second = value, highest
        elif value > second:
            second = value
    return second


def set_deployment_revision(d: Object, value: str) -> bool:
    meta = d["metadata"]
    if (meta.get("annotations") or {}).get(REVISION_ANNOTATION) == value:
        return False
    meta["annotations"] = {**(meta.get("annotations") or {}), REVISION_ANNOTATION: value}
    return True


def _copy_deployment_annotations(d: Object, rs: Object) -> bool:
    rs_annotations = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in annotations(d).items():
        if key in _ANNOTATIONS_TO_SKIP or rs_annotations.get(key) == value:
            continue
        rs_annotations[key] = value
        changed = True
    return changed


def set_new_replica_set_annotations(
    d: Object, rs: Object, new_revision: str, exists: bool, history_limit_chars: int
) -> bool:
    """SetNewReplicaSetAnnotations: the Deployment's annotations, the new revision (the one it replaces
    appended to the revision history, within `history_limit_chars`) and, for a new set, the replicas."""
    changed = _copy_deployment_annotations(d, rs)
    rs_annotations = rs["metadata"]["annotations"]
    old_revision = rs_annotations.get(REVISION_ANNOTATION)
    try:
        old_value = int(old_revision, 10) if old_revision else 0
        new_value = int(new_revision, 10)
    except ValueError:
        return False
    if old_value < new_value:
        rs_annotations[REVISION_ANNOTATION] = new_revision
        changed = True
        if old_revision is not None:
            _append_revision_history(rs_annotations, old_revision, history_limit_chars)
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def _append_revision_history(rs_annotations: dict[str, str], old_revision: str, limit: int) -> None:
    history = rs_annotations.get(REVISION_HISTORY_ANNOTATION, "")
    old_revisions = history.split(",")
    if not old_revisions[0]:
        rs_annotations[REVISION_HISTORY_ANNOTATION] = old_revision
        return
    total = len(history) + len(old_revision) + 1
    start = 0
    while total > limit and start < len(old_revisions):
        total -= len(old_revisions[start]) + 1
        start += 1
    if total <= limit:
        rs_annotations[REVISION_HISTORY_ANNOTATION] = ",".join([*old_revisions[start:], old_revision])


def set_deployment_annotations_to(d: Object, rollback_to: Object) -> None:
    """SetDeploymentAnnotationsTo: on rollback, the Deployment takes the set's annotations back."""
    kept = {k: v for k, v in annotations(d).items() if k in _ANNOTATIONS_TO_SKIP}
    kept.update({k: v for k, v in annotations(rollback_to).items() if k not in _ANNOTATIONS_TO_SKIP})
    d["metadata"]["annotations"] = kept


def _int_annotation(rs: Object, key: str) -> int | None:
    value = annotations(rs).get(key)
    if value is None:
        return None
    try:
        return int(value.strip(), 10)
    except ValueError:
        return None


def desired_replicas_annotation(rs: Object) -> int | None:
    return _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)


def set_replicas_annotations(rs: Object, desired: int, maximum: int) -> bool:
    rs_annotations = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in ((DESIRED_REPLICAS_ANNOTATION, str(desired)), (MAX_REPLICAS_ANNOTATION, str(maximum))):
        if rs_annotations.get(key) != value:
            rs_annotations[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: Object, desired: int, maximum: int) -> bool:
    current = annotations(rs)
    return current.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or current.get(
        MAX_REPLICAS_ANNOTATION
    ) != str(maximum)


# ---- max surge and unavailable ----


def scaled_value_from_int_or_percent(value: int | str | None, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, "N%" of `total` rounded up or down."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError("invalid type: string is not a percentage")
    try:
        percent = int(value[:-1], 10)
    except ValueError as err:
        raise ValueError(f'invalid value "{value}": {err}') from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def resolve_fenceposts(surge: Any, unavailable: Any, desired: int) -> tuple[int, int]:
    """ResolveFenceposts: both resolved against `desired`; both zero would never progress, so one may be
    unavailable."""
    max_surge_value = scaled_value_from_int_or_percent(surge if surge is not None else 0, desired, True)
    max_unavailable_value = scaled_value_from_int_or_percent(
        unavailable if unavailable is not None else 0, desired, False
    )
    if max_surge_value == 0 and max_unavailable_value == 0:
        max_unavailable_value = 1
    return max_surge_value, max_unavailable_value


def _rolling_params(d: Object) -> tuple[Any, Any]:
    rolling = (spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    return rolling.get("maxSurge"), rolling.get("maxUnavailable")


def max_unavailable(d: Object) -> int:
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    try:
        _, unavailable = resolve_fenceposts(*_rolling_params(d), replicas(d))
    except ValueError:
        return 0  # validation refuses such values; upstream ignores the error here too
    return min(unavailable, replicas(d))


def max_surge(d: Object) -> int:
    if not is_rolling_update(d):
        return 0
    try:
        surge, _ = resolve_fenceposts(*_rolling_params(d), replicas(d))
    except ValueError:
        return 0
    return surge


# ---- the pod-template-hash ----


def fnv32a(data: bytes) -> int:
    value = _FNV32_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def safe_encode_string(text: str) -> str:
    """rand.SafeEncodeString: each byte mapped into an alphabet that cannot spell words."""
    return "".join(_SAFE_ALPHANUMS[b % len(_SAFE_ALPHANUMS)] for b in text.encode())


def compute_hash(template: Object, collision_count: int | None) -> str:
    """controller.ComputeHash: FNV-32a of the template, then of the collision count (4 bytes, little
    endian) when there is one, as its decimal string safely encoded. Upstream hashes Go's spew dump of the
    typed struct; we hash a canonical JSON encoding (sorted keys), so values are as stable but differ from
    kube-controller-manager's for the same template."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little")
    return safe_encode_string(str(fnv32a(data)))


def _without_hash_label(template: Object) -> Object:
    meta = template.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY}
    stripped = {**template, "metadata": {**meta, "labels": labels}}
    if not labels:
        stripped["metadata"].pop("labels")
    return stripped


def equal_ignore_hash(template1: Object, template2: Object) -> bool:
    """EqualIgnoreHash: the templates are equal but for the pod-template-hash label."""
    return _without_hash_label(template1 or {}) == _without_hash_label(template2 or {})


def template_of(obj: Object) -> Object:
    return spec(obj).get("template") or {}


# ---- finding the new and old sets ----


def _creation_key(rs: Object) -> tuple[float, str]:
    meta = rs["metadata"]
    return parse_time(meta.get("creationTimestamp")) or 0.0, meta.get("name", "")


def by_creation_timestamp(sets: Iterable[Object], newest_first: bool = False) -> list[Object]:
    """ReplicaSetsByCreationTimestamp (ties by name)."""
    return sorted(sets, key=_creation_key, reverse=newest_first)


def by_size(sets: Iterable[Object], newer_first: bool) -> list[Object]:
    """ReplicaSetsBySizeNewer / ReplicaSetsBySizeOlder: the largest first, then the newer (older) first."""

    def compare(a: Object, b: Object) -> int:
        if replicas(a) != replicas(b):
            return -1 if replicas(a) > replicas(b) else 1
        ka, kb = _creation_key(a), _creation_key(b)
        if ka == kb:
            return 0
        return (-1 if ka > kb else 1) if newer_first else (-1 if ka < kb else 1)

    return sorted(sets, key=cmp_to_key(compare))


def find_new_replica_set(d: Object, sets: list[Object]) -> Object | None:
    """The oldest set whose template equals the Deployment's (several only after a hash collision)."""
    for rs in by_creation_timestamp(sets):
        if equal_ignore_hash(template_of(rs), template_of(d)):
            return rs
    return None


def find_old_replica_sets(d: Object, sets: list[Object]) -> tuple[list[Object], list[Object]]:
    """(the old sets with replicas, all the old sets)."""
    new_rs = find_new_replica_set(d, sets)
    new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
    all_old = [rs for rs in sets if rs["metadata"].get("uid") != new_uid]
    return [rs for rs in all_old if replicas(rs) != 0], all_old


def filter_active(sets: Iterable[Object | None]) -> list[Object]:
    return [rs for rs in sets if rs is not None and replicas(rs) > 0]


def find_active_or_latest(new_rs: Object | None, old_sets: list[Object]) -> Object | None:
    """The only set with replicas, or the newest when none has any (None when several have some)."""
    if new_rs is None and not old_sets:
        return None
    old_sets = by_creation_timestamp(old_sets, newest_first=True)
    active = filter_active([*old_sets, new_rs])
    if not active:
        return new_rs if new_rs is not None else old_sets[0]
    return active[0] if len(active) == 1 else None


def set_from_replica_set_template(d: Object, template: Object) -> None:
    d["spec"]["template"] = copy.deepcopy(_without_hash_label(template))


# ---- counts ----


def replica_count(sets: Iterable[Object | None]) -> int:
    return sum(replicas(rs) for rs in sets if rs is not None)


def actual_replica_count(sets: Iterable[Object | None]) -> int:
    return sum(status_int(rs, "replicas") for rs in sets if rs is not None)


def ready_replica_count(sets: Iterable[Object | None]) -> int:
    return sum(status_int(rs, "readyReplicas") for rs in sets if rs is not None)


def available_replica_count(sets: Iterable[Object | None]) -> int:
    return sum(status_int(rs, "availableReplicas") for rs in sets if rs is not None)


def round_half_away(value: float) -> int:
    """math.Round: halves away from zero (Python's round goes to even)."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def get_proportion(rs: Object | None, d: Object, to_add: int, added: int) -> int:
    """How many of the replicas being added (or removed, negative) this set takes, by its share."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _replica_set_fraction(rs: Object, d: Object) -> int:
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_replicas = replicas(d) + max_surge(d)
    annotated = _int_annotation(rs, MAX_REPLICAS_ANNOTATION)
    if annotated is None:
        annotated = status_int(d, "replicas")
    if annotated == 0:
        return 0  # no basis for a share (Go divides by zero here)
    return round_half_away(replicas(rs) * deployment_replicas / annotated) - replicas(rs)


def new_rs_new_replicas(d: Object, all_sets: list[Object], new_rs: Object) -> int:
    """NewRSNewReplicas: how many replicas the new set may have now."""
    if strategy_type(d) == RECREATE:
        return replicas(d)
    if strategy_type(d) != ROLLING_UPDATE:
        raise ValueError(f"deployment type {strategy_type(d)} isn't supported")
    surge = scaled_value_from_int_or_percent(_rolling_params(d)[0], replicas(d), True)
    current = replica_count(all_sets)
    max_total = replicas(d) + surge
    if current >= max_total:
        return replicas(new_rs)
    scale_up = min(max_total - current, replicas(d) - replicas(new_rs))
    return replicas(new_rs) + scale_up


def is_saturated(d: Object, rs: Object | None) -> bool:
    """The set has all the Deployment's replicas, all of them available."""
    if rs is None:
        return False
    desired = desired_replicas_annotation(rs)
    return (
        desired is not None
        and replicas(rs) == replicas(d)
        and desired == replicas(d)
        and status_int(rs, "availableReplicas") == replicas(d)
    )


# ---- rollout state ----


def deployment_complete(d: Object, new_status: Object) -> bool:
    want = replicas(d)
    return (
        new_status.get("updatedReplicas", 0) == want
        and new_status.get("replicas", 0) == want
        and new_status.get("availableReplicas", 0) == want
        and new_status.get("observedGeneration", 0) >= d["metadata"].get("generation", 0)
    )


def deployment_progressing(d: Object, new_status: Object) -> bool:
    old = status(d)
    old_old_replicas = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old_replicas = new_status.get("replicas", 0) - new_status.get("updatedReplicas", 0)
    return (
        new_status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0)
        or new_old_replicas < old_old_replicas
        or new_status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
        or new_status.get("availableReplicas", 0) > old.get("availableReplicas", 0)
    )


def deployment_timed_out(d: Object, new_status: Object, now: float) -> bool:
    if not has_progress_deadline(d):
        return False
    condition = get_condition(new_status, PROGRESSING)
    if condition is None or condition.get("reason") == NEW_RS_AVAILABLE_REASON:
        return False
    if condition.get("reason") == TIMED_OUT_REASON:
        return True
    last_update = parse_time(condition.get("lastUpdateTime")) or 0.0
    return last_update + int(spec(d)["progressDeadlineSeconds"]) < now
