"""Annotations with meaning for pods (ValidatePodSpecificAnnotations): mirror pods, deletion cost,
the deprecated seccomp and AppArmor annotations."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....apimachinery.field import ErrorList, Path
from .paths import local_descending

Object = dict[str, Any]
MIRROR_POD = "kubernetes.io/config.mirror"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def container_names(spec: Object) -> set[str]:
    return {c.get("name", "") for key in CONTAINER_LISTS for c in spec.get(key) or [] if isinstance(c, dict)}


def _int32(value: str) -> bool:
    try:
        number = int(value, 10)
    except ValueError:
        return False
    return -(1 << 31) <= number < (1 << 31) and value.strip() == value


def _seccomp(profile: str, path: Path) -> ErrorList:
    if profile in ("runtime/default", "docker/default", "unconfined"):
        return []
    if profile.startswith("localhost/"):
        return local_descending(profile.removeprefix("localhost/"), path)
    return [field.invalid(path, profile, "must be a valid seccomp profile")]


def _apparmor_format(profile: str) -> str | None:
    if profile in ("", "runtime/default", "unconfined") or profile.startswith("localhost/"):
        return None
    return f'invalid AppArmor profile name: "{profile}"'


def validate_pod_annotations(annotations: Any, spec: Object, path: Path) -> ErrorList:
    annotations = annotations if isinstance(annotations, dict) else {}
    errs: ErrorList = []
    if MIRROR_POD in annotations and not spec.get("nodeName"):
        errs.append(field.invalid(path.key(MIRROR_POD), annotations[MIRROR_POD],
                                  "must set spec.nodeName if mirror pod annotation is set"))
    if DELETION_COST in annotations and not _int32(annotations[DELETION_COST]):
        errs.append(field.invalid(path.key(DELETION_COST), annotations[DELETION_COST], "must be a 32bit integer"))
    if SECCOMP_POD in annotations:
        errs += _seccomp(annotations[SECCOMP_POD], path.child(SECCOMP_POD))
    names = container_names(spec)
    for key in sorted(annotations):
        if key.startswith(SECCOMP_CONTAINER_PREFIX):
            errs += _seccomp(annotations[key], path.child(key))
        if key.startswith(APPARMOR_PREFIX):
            container = key.removeprefix(APPARMOR_PREFIX)
            if container not in names:
                errs.append(field.invalid(path.key(key), container, "container not found"))
            why = _apparmor_format(annotations[key])
            if why is not None:
                errs.append(field.invalid(path.key(key), annotations[key], why))
    return errs
