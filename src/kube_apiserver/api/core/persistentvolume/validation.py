"""PersistentVolume validation (ValidatePersistentVolumeSpec, ValidatePersistentVolumeUpdate and the
mount options check of pkg/volume/validation)."""

from __future__ import annotations

import copy
import posixpath
from typing import Any

from ....apimachinery import field, quantity, validation
from ....apimachinery.field import ErrorList, Path
from ....apimachinery.meta import spec_of
from ..pod.specdiff import spec_diff
from ..podspec.scheduling import validate_node_selector_term
from .helpers import validate_access_modes, validate_class_name, validate_volume_mode
from .sources import SOURCE_KEYS, validate_sources

Object = dict[str, Any]
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
NOT_POSITIVE = "must be greater than zero"
MOUNT_OPTIONS_ANNOTATION = "volume.beta.kubernetes.io/mount-options"
# The sources whose plugins take mount options (checkMountOption).
MOUNTABLE = ("gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "nfs", "rbd", "quobyte", "iscsi", "cinder",
             "cephfs", "azureFile", "vsphereVolume", "azureDisk", "photonPersistentDisk")


def validate_positive_quantity(raw: Any, path: Path) -> ErrorList:
    """ValidatePositiveQuantityValue."""
    try:
        value = quantity.parse(raw)
    except quantity.QuantityError:
        return []
    return [field.invalid(path, str(value), NOT_POSITIVE)] if value.sign() <= 0 else []


def validate_basic_resource(raw: Any, path: Path) -> ErrorList:
    """validateBasicResource: Value() may not be negative."""
    try:
        value = quantity.parse(raw)
    except quantity.QuantityError:
        return []
    scaled = value.scaled(0)
    return [field.invalid(path, scaled, "must be a valid resource quantity")] if scaled < 0 else []


def _capacity(spec: Object, path: Path) -> ErrorList:
    capacity = spec.get("capacity") or {}
    errs: ErrorList = [] if capacity else [field.required(path, "")]
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(field.not_supported(path, spec.get("capacity"), ["storage"]))
    for name in sorted(capacity):
        errs += validate_basic_resource(capacity[name], path.key(name))
        errs += validate_positive_quantity(capacity[name], path.key(name))
    return errs


def validate_node_affinity(affinity: Object, path: Path) -> ErrorList:
    """validateVolumeNodeAffinity: required node constraints, as a NodeSelector."""
    required = affinity.get("required")
    if not isinstance(required, dict):
        return [field.required(path.child("required"), "must specify required node constraints")]
    terms_path = path.child("required", "nodeSelectorTerms")
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return [field.required(terms_path, "must have at least one node selector term")]
    errs: ErrorList = []
    for i, term in enumerate(terms):
        errs += validate_node_selector_term(term if isinstance(term, dict) else {}, terms_path.index(i), False)
    return errs


def _reclaim_policy(spec: Object, path: Path) -> ErrorList:
    policy = spec.get("persistentVolumeReclaimPolicy") or ""
    errs: ErrorList = []
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(field.not_supported(path, policy, RECLAIM_POLICIES))
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and policy == "Recycle" and posixpath.normpath(host_path.get("path") or ".") == "/":
        errs.append(field.forbidden(path, "may not be 'recycle' for a hostPath mount of '/'"))
    return errs


def _attributes_class(spec: Object, path: Path) -> ErrorList:
    name = spec.get("volumeAttributesClassName")
    if name is None:
        return []
    errs = validate_class_name(name, path) if name else [field.required(path, "an empty string is disallowed")]
    if spec.get("csi") is None:
        errs.append(field.required(path.parent().child("csi"), "has to be specified when using "
                                                                "volumeAttributesClassName"))
    return errs


def validate_pv_spec(spec: Object, path: Path) -> ErrorList:
    """ValidatePersistentVolumeSpec for a PersistentVolume (not an inline volume)."""
    modes = spec.get("accessModes") or []
    errs: ErrorList = [] if modes else [field.required(path.child("accessModes"), "")]
    errs += validate_access_modes(modes, path.child("accessModes"))
    errs += _capacity(spec, path.child("capacity"))
    errs += _reclaim_policy(spec, path.child("persistentVolumeReclaimPolicy"))
    affinity = spec.get("nodeAffinity")
    if isinstance(affinity, dict):
        errs += validate_node_affinity(affinity, path.child("nodeAffinity"))
    count, source_errs = validate_sources(spec, path)
    errs += source_errs
    if spec.get("local") is not None and not isinstance(affinity, dict):
        errs.append(field.required(path.child("nodeAffinity"), "Local volume requires node affinity"))
    if not count:
        errs.append(field.required(path, "must specify a volume type"))
    if spec.get("storageClassName"):
        errs += validate_class_name(spec["storageClassName"], path.child("storageClassName"))
    errs += validate_volume_mode(spec.get("volumeMode"), path.child("volumeMode"))
    return errs + _attributes_class(spec, path.child("volumeAttributesClassName"))


def validate_mount_options(obj: Object) -> ErrorList:
    """checkMountOption: the mount options annotation only for plugins that take mount options."""
    spec = spec_of(obj)
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if any(spec.get(key) is not None for key in MOUNTABLE) or MOUNT_OPTIONS_ANNOTATION not in annotations:
        return []
    return [field.forbidden(field.Path("metadata", "annotations", MOUNT_OPTIONS_ANNOTATION),
                            "may not specify mount options for this volume type")]


def validate_pv(obj: Object) -> ErrorList:
    """ValidatePersistentVolume (without ValidateObjectMeta) and the volume plugin checks."""
    return validate_pv_spec(spec_of(obj), field.Path("spec")) + validate_mount_options(obj)


def sources_of(spec: Object) -> Object:
    return {key: spec[key] for key in SOURCE_KEYS if key in spec}


def validate_pv_update(obj: Object, old: Object) -> ErrorList:
    """ValidatePersistentVolumeUpdate: the source is immutable (a CSI volume may gain a
    controllerExpandSecretRef), so are volumeMode and a set nodeAffinity."""
    spec, old_spec = spec_of(obj), spec_of(old)
    new_sources, old_sources = sources_of(spec), sources_of(old_spec)
    csi, old_csi = new_sources.get("csi"), old_sources.get("csi")
    if isinstance(csi, dict) and isinstance(old_csi, dict) and old_csi.get("controllerExpandSecretRef") is None:
        new_sources = copy.deepcopy(new_sources)
        new_sources["csi"].pop("controllerExpandSecretRef", None)
    errs: ErrorList = []
    if new_sources != old_sources:
        diff = spec_diff(old_sources, new_sources, "core.PersistentVolumeSource")
        errs.append(field.forbidden(field.Path("spec", "persistentvolumesource"),
                                    f"spec.persistentvolumesource is immutable after creation\n{diff}"))
    errs += validation.validate_immutable_field(spec.get("volumeMode"), old_spec.get("volumeMode"),
                                                field.Path("volumeMode"))
    if old_spec.get("nodeAffinity") is not None:
        errs += validation.validate_immutable_field(spec.get("nodeAffinity"), old_spec.get("nodeAffinity"),
                                                    field.Path("nodeAffinity"))
    old_class, new_class = old_spec.get("volumeAttributesClassName"), spec.get("volumeAttributesClassName")
    if old_class != new_class and old_class is not None and new_class is None:
        errs.append(field.forbidden(field.Path("spec", "volumeAttributesClassName"),
                                    "update from non-nil value to nil is forbidden"))
    return errs

