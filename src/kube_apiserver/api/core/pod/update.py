"""ValidatePodUpdate: what an update may change in a pod's spec (images, activeDeadlineSeconds,
added tolerations, removed scheduling gates...) and nothing else."""

from __future__ import annotations

import copy
from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ..podspec.scheduling import validate_tolerations
from .specdiff import spec_diff

Object = dict[str, Any]
SPEC = Path("spec")
MAX_INT32 = 2147483647
MIRROR_POD = "kubernetes.io/config.mirror"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
UPDATABLE_FIELDS = ",".join((
    "`spec.containers[*].image`", "`spec.initContainers[*].image`", "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"))


def _spec(obj: Object) -> Object:
    return obj.get("spec") if isinstance(obj.get("spec"), dict) else {}


def validate_annotation_updates(new: Object, old: Object) -> ErrorList:
    """ValidatePodSpecificAnnotationUpdates: mirror-pod and AppArmor annotations are fixed."""
    path = Path("metadata", "annotations")
    new_ann, old_ann = new["metadata"].get("annotations") or {}, old["metadata"].get("annotations") or {}
    errs: ErrorList = []
    for key, value in old_ann.items():
        if new_ann.get(key) == value and key in new_ann:
            continue
        if key.startswith(APPARMOR_PREFIX):
            errs.append(field.forbidden(path.key(key), "may not remove or update AppArmor annotations"))
        if key == MIRROR_POD:
            errs.append(field.forbidden(path.key(key), "may not remove or update mirror pod annotation"))
    for key in new_ann:
        if key in old_ann:
            continue
        if key.startswith(APPARMOR_PREFIX):
            errs.append(field.forbidden(path.key(key), "may not add AppArmor annotations"))
        if key == MIRROR_POD:
            errs.append(field.forbidden(path.key(key), "may not add mirror pod annotation"))
    return errs


def _container_updates(new: list[Object], old: list[Object], path: Path) -> tuple[ErrorList, bool]:
    if len(new) != len(old):
        return [field.forbidden(path, "pod updates may not add or remove containers")], True
    errs: ErrorList = []
    for i, container in enumerate(new):
        image = container.get("image") or ""
        if not image:
            errs.append(field.required(path.index(i).child("image"), ""))
        if image.strip() != image:
            errs.append(field.invalid(path.index(i).child("image"), image, "must not have leading or trailing "
                                                                           "whitespace"))
    return errs, False


def _deadline(new: Object, old: Object) -> ErrorList:
    path, value, previous = SPEC.child("activeDeadlineSeconds"), new.get("activeDeadlineSeconds"), \
        old.get("activeDeadlineSeconds")
    if value is not None:
        if not 0 <= value <= MAX_INT32:
            return [field.invalid(path, value, validation.inclusive_range_error(0, MAX_INT32))]
        if previous is not None and previous < value:
            return [field.invalid(path, value, "must be less than or equal to previous value")]
    elif previous is not None:
        return [field.invalid(path, None, "must not update from a positive integer to nil value")]
    return []


def _only_added_tolerations(new: list[Object], old: list[Object]) -> ErrorList:
    path = SPEC.child("tolerations")
    for previous in old:
        wanted = {k: v for k, v in previous.items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in t.items() if k != "tolerationSeconds"} == wanted for t in new):
            return [field.forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return validate_tolerations(new, path)


def _only_deleted_gates(new: list[Object], old: list[Object]) -> ErrorList:
    old_names = {g.get("name") for g in old}
    return [field.forbidden(SPEC.child("schedulingGates").index(i).child("name"),
                            f"only deletion is allowed, but found new scheduling gate '{g.get('name', '')}'")
            for i, g in enumerate(new) if g.get("name") not in old_names]


def _node_selector_additions(new: Any, old: Any) -> ErrorList:
    path = SPEC.child("nodeSelector")
    new, old = new or {}, old or {}
    return [field.invalid(path.key(k), new.get(k), "only additions to spec.nodeSelector are allowed (no mutations "
                                                   "or deletions)") for k, v in old.items() if new.get(k) != v]


def _munged(new: Object, old: Object) -> tuple[Object, ErrorList]:
    """The new spec with every field an update may change taken from the old one."""
    munged = copy.deepcopy(new)
    errs: ErrorList = []
    for key in ("containers", "initContainers"):
        for container, previous in zip(munged.get(key) or [], old.get(key) or [], strict=False):
            container["image"] = previous.get("image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _copy(old, munged, key)
    grace, previous = munged.get("terminationGracePeriodSeconds"), old.get("terminationGracePeriodSeconds")
    if previous is not None and previous < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = previous
    if old.get("schedulingGates"):
        if munged.get("nodeSelector") != old.get("nodeSelector"):
            errs += _node_selector_additions(munged.get("nodeSelector"), old.get("nodeSelector"))
            _copy(old, munged, "nodeSelector")
        node_affinity = (old.get("affinity") or {}).get("nodeAffinity")
        if isinstance(munged.get("affinity"), dict):
            munged["affinity"] = {**munged["affinity"], "nodeAffinity": node_affinity}
            munged["affinity"] = {k: v for k, v in munged["affinity"].items() if v is not None} or None
        if munged.get("affinity") is None:
            munged.pop("affinity", None)
            _copy(old, munged, "affinity")
    return munged, errs


def _copy(src: Object, dst: Object, key: str) -> None:
    if key in src:
        dst[key] = copy.deepcopy(src[key])
    else:
        dst.pop(key, None)


def validate_pod_update(new_pod: Object, old_pod: Object) -> ErrorList:
    errs = validate_annotation_updates(new_pod, old_pod)
    new, old = _spec(new_pod), _spec(old_pod)
    for key in ("containers", "initContainers"):
        container_errs, stop = _container_updates(new.get(key) or [], old.get(key) or [], SPEC.child(key))
        errs += container_errs
        if stop:
            return errs
    deadline_errs = _deadline(new, old)
    if deadline_errs:
        return errs + deadline_errs
    errs += _only_added_tolerations(new.get("tolerations") or [], old.get("tolerations") or [])
    errs += _only_deleted_gates(new.get("schedulingGates") or [], old.get("schedulingGates") or [])
    if new == old:
        return errs
    munged, munge_errs = _munged(new, old)
    errs += munge_errs
    if munged != old:
        errs.append(field.forbidden(SPEC, f"pod updates may not change fields other than {UPDATABLE_FIELDS}\n"
                                          f"{spec_diff(old, munged)}"))
    return errs
