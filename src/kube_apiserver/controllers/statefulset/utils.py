"""What a StatefulSet's pods and claims must look like (pkg/controller/statefulset/stateful_set_utils.go):
ordinals and identities, claims from the volumeClaimTemplates and the owner references the
persistentVolumeClaimRetentionPolicy asks for, revisions as patches of the pod template, and status."""

from __future__ import annotations

import copy
import re
from typing import Any

from ...apimachinery.clock import wall_time
from ..controller_utils import (
    is_pod_available,
    is_pod_ready,
    new_controller_ref,
    pod_from_template,
    pod_phase,
)
from ..history import new_controller_revision

Object = dict[str, Any]
API_VERSION, KIND = "apps/v1", "StatefulSet"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
RETAIN, DELETE = "Retain", "Delete"
_POD_NAME = re.compile(r"(.*)-([0-9]+)\Z", re.DOTALL)
_INT32_MAX = 2**31 - 1


def spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def replicas(sts: Object) -> int:
    value = spec(sts).get("replicas")
    return 1 if value is None else int(value)


def min_ready_seconds(sts: Object) -> int:
    return int(spec(sts).get("minReadySeconds") or 0)


# ---- ordinals and identity ----


def parent_and_ordinal(pod: Object) -> tuple[str, int]:
    """getParentNameAndOrdinal: `<parent>-<ordinal>`; ("", -1) for a name of another shape, and ordinal -1
    when it does not fit an int32."""
    match = _POD_NAME.match(pod["metadata"].get("name", ""))
    if match is None:
        return "", -1
    ordinal = int(match.group(2))
    return match.group(1), ordinal if ordinal <= _INT32_MAX else -1


def ordinal_of(pod: Object) -> int:
    return parent_and_ordinal(pod)[1]


def start_ordinal(sts: Object) -> int:
    return int((spec(sts).get("ordinals") or {}).get("start") or 0)


def end_ordinal(sts: Object) -> int:
    return start_ordinal(sts) + replicas(sts) - 1


def in_ordinal_range(pod: Object, sts: Object) -> bool:
    return start_ordinal(sts) <= ordinal_of(pod) <= end_ordinal(sts)


def pod_name(sts: Object, ordinal: int) -> str:
    return f"{sts['metadata']['name']}-{ordinal}"


def claim_name(sts: Object, template: Object, ordinal: int) -> str:
    return f"{(template.get('metadata') or {}).get('name', '')}-{sts['metadata']['name']}-{ordinal}"


def is_member_of(sts: Object, pod: Object) -> bool:
    return parent_and_ordinal(pod)[0] == sts["metadata"]["name"]


def identity_matches(sts: Object, pod: Object) -> bool:
    parent, ordinal = parent_and_ordinal(pod)
    meta = pod["metadata"]
    return (
        ordinal >= 0
        and parent == sts["metadata"]["name"]
        and meta.get("name") == pod_name(sts, ordinal)
        and meta.get("namespace") == sts["metadata"].get("namespace")
        and (meta.get("labels") or {}).get(POD_NAME_LABEL) == meta.get("name")
    )


def claim_templates(sts: Object) -> list[Object]:
    return [t for t in spec(sts).get("volumeClaimTemplates") or () if isinstance(t, dict)]


def storage_matches(sts: Object, pod: Object) -> bool:
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in spec(pod).get("volumes") or () if isinstance(v, dict)}
    for template in claim_templates(sts):
        volume = volumes.get((template.get("metadata") or {}).get("name"))
        source = (volume or {}).get("persistentVolumeClaim") or {}
        if not source or source.get("claimName") != claim_name(sts, template, ordinal):
            return False
    return True


def claims_for(sts: Object, pod: Object) -> dict[str, Object]:
    """getPersistentVolumeClaims: per template name, the pod's claim (named for its ordinal, labelled
    with the set's matchLabels)."""
    ordinal = ordinal_of(pod)
    match_labels = (spec(sts).get("selector") or {}).get("matchLabels") or {}
    claims = {}
    for template in claim_templates(sts):
        claim = copy.deepcopy(template)
        meta = claim.setdefault("metadata", {})
        meta["name"] = claim_name(sts, template, ordinal)
        meta["namespace"] = sts["metadata"].get("namespace", "")
        meta["labels"] = {**(meta.get("labels") or {}), **match_labels}
        claim.pop("status", None)
        claim.update({"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
        claims[(template.get("metadata") or {}).get("name", "")] = claim
    return claims


def update_storage(sts: Object, pod: Object) -> None:
    """The claims' volumes replace any of the pod's volumes of the same names."""
    claims = claims_for(sts, pod)
    volumes = [
        {"name": name, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
        for name, claim in claims.items()
    ]
    volumes += [
        v for v in spec(pod).get("volumes") or () if isinstance(v, dict) and v.get("name") not in claims
    ]
    pod.setdefault("spec", {})["volumes"] = volumes
    if not volumes:
        pod["spec"].pop("volumes")


def update_identity(sts: Object, pod: Object) -> None:
    ordinal = ordinal_of(pod)
    meta = pod["metadata"]
    meta["name"] = pod_name(sts, ordinal)
    meta["namespace"] = sts["metadata"].get("namespace", "")
    labels = meta.setdefault("labels", {})
    labels[POD_NAME_LABEL] = meta["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)


def new_pod(sts: Object, ordinal: int) -> Object:
    """newStatefulSetPod: the template with the set's reference, the ordinal's name, labels, hostname,
    subdomain (the governing service) and claims."""
    template = spec(sts).get("template") or {}
    pod = pod_from_template(template, sts, new_controller_ref(sts, API_VERSION, KIND))
    pod["metadata"].pop("generateName", None)
    pod["metadata"]["name"] = pod_name(sts, ordinal)
    update_identity(sts, pod)
    pod["spec"]["hostname"] = pod["metadata"]["name"]
    if spec(sts).get("serviceName"):
        pod["spec"]["subdomain"] = spec(sts)["serviceName"]
    update_storage(sts, pod)
    return pod


def pod_revision(pod: Object) -> str:
    return (pod["metadata"].get("labels") or {}).get(REVISION_LABEL, "")


def _partition(sts: Object) -> int | None:
    rolling = (spec(sts).get("updateStrategy") or {}).get("rollingUpdate")
    return None if rolling is None else int(rolling.get("partition") or 0)


def update_strategy(sts: Object) -> str:
    return (spec(sts).get("updateStrategy") or {}).get("type") or "RollingUpdate"


def new_versioned_pod(
    current_set: Object, update_set: Object, current_revision: str, update_revision: str, ordinal: int
) -> Object:
    """newVersionedStatefulSetPod: below the partition (or, without one, among the current replicas) a
    pod is made at the current revision, else at the update revision."""
    partition = _partition(current_set)
    start = start_ordinal(current_set)
    current_replicas = int((current_set.get("status") or {}).get("currentReplicas") or 0)
    at_current = (
        update_strategy(current_set) == "RollingUpdate"
        and partition is None
        and ordinal < start + current_replicas
    ) or (partition is not None and ordinal < start + partition)
    source, revision = (current_set, current_revision) if at_current else (update_set, update_revision)
    pod = new_pod(source, ordinal)
    pod["metadata"].setdefault("labels", {})[REVISION_LABEL] = revision
    return pod


# ---- pod states ----


def is_created(pod: Object) -> bool:
    return bool(pod_phase(pod))


def is_terminating(pod: Object) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_running_and_ready(pod: Object) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: Object, min_ready: int, now: float | None = None) -> bool:
    return is_pod_available(pod, min_ready, wall_time() if now is None else now)


def is_healthy(pod: Object) -> bool:
    return is_running_and_ready(pod) and not is_terminating(pod)


def is_unavailable(pod: Object, min_ready: int) -> bool:
    return not is_healthy(pod) or not is_running_and_available(pod, min_ready)


# ---- revisions ----


def get_patch(sts: Object) -> Object:
    """getPatch: what a revision stores, the pod template as a strategic merge patch replacing it."""
    template = copy.deepcopy(spec(sts).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def new_revision(sts: Object, revision: int, collision_count: int) -> Object:
    template_labels = (spec(sts).get("template") or {}).get("metadata", {}).get("labels")
    cr = new_controller_revision(
        sts, API_VERSION, KIND, template_labels, get_patch(sts), revision, collision_count
    )
    annotations = sts["metadata"].get("annotations")
    if annotations:
        cr["metadata"]["annotations"] = dict(annotations)
    return cr


def apply_revision(sts: Object, revision: Object) -> Object:
    """ApplyRevision: the set with the revision's template (the patch replaces the whole template)."""
    clone = copy.deepcopy(sts)
    template = (
        ((revision.get("data") or {}).get("spec") or {}) if isinstance(revision.get("data"), dict) else {}
    ).get("template")
    if isinstance(template, dict):
        clone.setdefault("spec", {})["template"] = {
            k: v for k, v in copy.deepcopy(template).items() if k != "$patch"
        }
    return clone


# ---- claims and the retention policy ----


def retention_policy(sts: Object) -> tuple[str, str]:
    """(whenDeleted, whenScaled), Retain when unset."""
    policy = spec(sts).get("persistentVolumeClaimRetentionPolicy") or {}
    return policy.get("whenDeleted") or RETAIN, policy.get("whenScaled") or RETAIN


def _matches_ref(ref: Object, obj: Object, api_version: str, kind: str) -> bool:
    return (
        ref.get("apiVersion") == api_version
        and ref.get("kind") == kind
        and ref.get("name") == obj["metadata"].get("name")
    )


def _refs(claim: Object) -> list[Object]:
    return [r for r in claim["metadata"].get("ownerReferences") or () if isinstance(r, dict)]


def has_owner_ref(target: Object, owner: Object) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("uid") == uid for r in _refs(target))


def has_stale_owner_ref(claim: Object, obj: Object, api_version: str, kind: str) -> bool:
    """A reference to an object of that name whose uid is not this one's (a deleted predecessor)."""
    for ref in _refs(claim):
        if _matches_ref(ref, obj, api_version, kind):
            return ref.get("uid") != obj["metadata"].get("uid")
    return False


def has_unexpected_controller(claim: Object, sts: Object, pod: Object) -> bool:
    if retention_policy(sts) == (RETAIN, RETAIN):
        return False
    for ref in _refs(claim):
        for owner, api_version, kind in ((sts, API_VERSION, KIND), (pod, "v1", "Pod")):
            if _matches_ref(ref, owner, api_version, kind):
                if ref.get("uid") != owner["metadata"].get("uid"):
                    return True
                break
        else:
            if ref.get("controller") is True:
                return True
    return False


def _has_non_controller_owner(claim: Object, sts: Object, pod: Object) -> bool:
    uids = (sts["metadata"].get("uid"), pod["metadata"].get("uid"))
    return any(r.get("uid") in uids and r.get("controller") is not True for r in _refs(claim))


def claim_owner_up_to_date(claim: Object, sts: Object, pod: Object) -> bool:
    """isClaimOwnerUpToDate: Retain/Retain wants no reference to the set or pod; whenDeleted Delete a
    controller reference to the set (while the pod is in range); whenScaled Delete one to the pod once
    it is scaled away. Stale or foreign controller references are left alone."""
    if has_stale_owner_ref(claim, sts, API_VERSION, KIND) or has_stale_owner_ref(claim, pod, "v1", "Pod"):
        return True
    if has_unexpected_controller(claim, sts, pod):
        return not (has_owner_ref(claim, sts) or has_owner_ref(claim, pod))
    if _has_non_controller_owner(claim, sts, pod):
        return False
    when_deleted, when_scaled = retention_policy(sts)
    scaled_down = not in_ordinal_range(pod, sts)
    set_ref, pod_ref = has_owner_ref(claim, sts), has_owner_ref(claim, pod)
    if when_scaled == DELETE and when_deleted == DELETE:
        return scaled_down != set_ref and scaled_down == pod_ref
    if when_scaled == DELETE and when_deleted == RETAIN:
        return not set_ref and scaled_down == pod_ref
    if when_scaled == RETAIN and when_deleted == DELETE:
        return set_ref and not pod_ref
    return not set_ref and not pod_ref  # Retain/Retain, and an unknown policy treated as it


def update_claim_owner_refs(claim: Object, sts: Object, pod: Object) -> None:
    """updateClaimOwnerRefForSetAndPod: our references scrubbed, then those the policy wants added."""
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [
        r
        for r in _refs(claim)
        if not (_matches_ref(r, sts, API_VERSION, KIND) or _matches_ref(r, pod, "v1", "Pod"))
    ]
    if not unexpected:
        when_deleted, when_scaled = retention_policy(sts)
        scaled_down = not in_ordinal_range(pod, sts)
        if when_scaled == DELETE and scaled_down:
            refs = _add_controller_ref(refs, pod, "v1", "Pod")
        if when_deleted == DELETE and not (when_scaled == DELETE and scaled_down):
            refs = _add_controller_ref(refs, sts, API_VERSION, KIND)
    if refs:
        claim["metadata"]["ownerReferences"] = refs
    else:
        claim["metadata"].pop("ownerReferences", None)


def _add_controller_ref(refs: list[Object], owner: Object, api_version: str, kind: str) -> list[Object]:
    if any(r.get("uid") == owner["metadata"].get("uid") for r in refs):
        return refs
    return [*refs, new_controller_ref(owner, api_version, kind)]


# ---- status ----


def replica_status(pods: list[Object], min_ready: int, current: str, update: str) -> Object:
    """computeReplicaStatus over the pods: created, ready, available, at the current and update revisions."""
    counts = {
        "replicas": 0,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "currentReplicas": 0,
        "updatedReplicas": 0,
    }
    now = wall_time()
    for pod in pods:
        created = is_created(pod)
        counts["replicas"] += created
        if is_running_and_ready(pod):
            counts["readyReplicas"] += 1
            counts["availableReplicas"] += is_running_and_available(pod, min_ready, now)
        if created and not is_terminating(pod):
            revision = pod_revision(pod)
            counts["currentReplicas"] += revision == current
            counts["updatedReplicas"] += revision == update
    return counts


def inconsistent_status(sts: Object, status: Object) -> bool:
    current = sts.get("status") or {}
    if status.get("observedGeneration", 0) > (current.get("observedGeneration") or 0):
        return True
    return any(
        (current.get(f) or 0) != (status.get(f) or 0)
        for f in ("replicas", "currentReplicas", "readyReplicas", "updatedReplicas", "availableReplicas")
    ) or any((current.get(f) or "") != (status.get(f) or "") for f in ("currentRevision", "updateRevision"))


def complete_rolling_update(sts: Object, status: Object) -> None:
    """A rolling update whose every replica is updated and ready makes the update revision current."""
    want = replicas(sts)
    if (
        update_strategy(sts) == "RollingUpdate"
        and status["updatedReplicas"] == want
        and status["readyReplicas"] == want
        and status["replicas"] == want
    ):
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]
