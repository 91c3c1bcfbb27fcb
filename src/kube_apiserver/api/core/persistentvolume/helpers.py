"""What PersistentVolumes and PersistentVolumeClaims share: access modes, volume modes, class names
(pkg/apis/core/helper and the supported* sets of pkg/apis/core/validation)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ....apimachinery.meta import spec_of

Object = dict[str, Any]
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
SHORT_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                      ("ReadWriteOncePod", "RWOP"))
VOLUME_MODES = ("Block", "Filesystem")
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def validate_access_modes(modes: list[Any], path: Path) -> ErrorList:
    """Each mode supported; ReadWriteOncePod only alone."""
    errs: ErrorList = []
    once_pod = others = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(field.not_supported(path, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            others = True
    if once_pod and others:
        errs.append(field.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def validate_class_name(value: str, path: Path) -> ErrorList:
    """ValidateClassName (a DNS subdomain)."""
    return [field.invalid(path, value, m) for m in validation.name_is_dns_subdomain(value, False)]


def validate_volume_mode(mode: Any, path: Path) -> ErrorList:
    if mode is not None and mode not in VOLUME_MODES:
        return [field.not_supported(path, mode, VOLUME_MODES)]
    return []


def access_modes_string(modes: Any) -> str:
    """GetAccessModesAsString: RWO,ROX,RWX,RWOP in that order, each once."""
    present = set(modes or [])
    return ",".join(short for mode, short in SHORT_ACCESS_MODES if mode in present)


def _annotations(obj: Object) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def volume_class(obj: Object) -> str:
    """GetPersistentVolumeClass and GetPersistentVolumeClaimClass: the beta annotation, else the spec's
    storageClassName."""
    annotations = _annotations(obj)
    if BETA_CLASS_ANNOTATION in annotations:
        return annotations[BETA_CLASS_ANNOTATION]
    return spec_of(obj).get("storageClassName") or ""


def claim_has_class(obj: Object) -> bool:
    """PersistentVolumeClaimHasClass: a storageClassName (even empty) or the beta annotation."""
    return spec_of(obj).get("storageClassName") is not None or BETA_CLASS_ANNOTATION in _annotations(obj)
