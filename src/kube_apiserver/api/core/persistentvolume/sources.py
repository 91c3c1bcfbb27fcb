"""The volume sources of a PersistentVolume (the *PersistentVolumeSource checks ValidatePersistentVolumeSpec
calls); the sources a Pod may also name are checked as in a PodSpec."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ..podspec.options import PodValidationOptions
from ..podspec.paths import no_backsteps
from ..podspec.volume_sources import SOURCES as POD_SOURCES

Object = dict[str, Any]
Check = Callable[[Object, Path], ErrorList]
POD_CHECKS = {key: check for key, _, _, check in POD_SOURCES}
OPTIONS = PodValidationOptions()
RESERVED_OPTION_SUFFIXES = (".kubernetes.io", ".k8s.io")


def _pod(key: str) -> Check:
    return lambda source, path: POD_CHECKS[key](source, path, OPTIONS)


def _required(source: Object, path: Path, *keys: str) -> ErrorList:
    return [field.required(path.child(k), "") for k in keys if not source.get(k)]


def _dns_label(value: str, path: Path) -> ErrorList:
    return [field.invalid(path, value, m) for m in validation.is_dns1123_label(value)]


def validate_secret_reference(ref: Object, path: Path) -> ErrorList:
    """validatePVSecretReference."""
    name, namespace = ref.get("name") or "", ref.get("namespace") or ""
    errs: ErrorList = [field.required(path.child("name"), "")] if not name else \
        [field.invalid(path.child("name"), name, m) for m in validation.is_dns1123_subdomain(name)]
    errs += [field.required(path.child("namespace"), "")] if not namespace else \
        _dns_label(namespace, path.child("namespace"))
    return errs


def _secret_ref_named(source: Object, path: Path, namespaced: bool) -> ErrorList:
    ref = source.get("secretRef")
    if not isinstance(ref, dict):
        return []
    keys = ("name", "namespace") if namespaced else ("name",)
    return _required(ref, path.child("secretRef"), *keys)


def _glusterfs(source: Object, path: Path) -> ErrorList:
    errs = _required(source, path, "endpoints", "path")
    namespace = source.get("endpointsNamespace")
    if namespace is not None:
        ns_path = path.child("endpointsNamespace")
        if not namespace:
            errs.append(field.invalid(ns_path, namespace, "if the endpointnamespace is set, it must be a valid "
                                                          "namespace name"))
        else:
            errs += [field.invalid(ns_path, namespace, m) for m in validation.name_is_dns_label(namespace, False)]
    return errs


def _cinder(source: Object, path: Path) -> ErrorList:
    return _required(source, path, "volumeID") + _secret_ref_named(source, path, True)


def _flex(source: Object, path: Path) -> ErrorList:
    """validateFlexPersistentVolumeSource: options may not use the kubernetes.io and k8s.io namespaces."""
    errs = _required(source, path, "driver")
    for key in sorted(source.get("options") or {}):
        namespace = key.split("/", 1)[0] if "/" in key else key
        if ("." + namespace.lower()).endswith(RESERVED_OPTION_SUFFIXES):
            errs.append(field.invalid(path.child("options").key(key), key,
                                      "kubernetes.io and k8s.io namespaces are reserved"))
    return errs


def _azure_file(source: Object, path: Path) -> ErrorList:
    errs = _required(source, path, "secretName", "shareName")
    if source.get("secretNamespace") is not None and not source["secretNamespace"]:
        errs.append(field.required(path.child("secretNamespace"), ""))
    return errs


def _local(source: Object, path: Path) -> ErrorList:
    if not source.get("path"):
        return [field.required(path.child("path"), "")]
    return no_backsteps(source["path"], path.child("path"))


def _storageos(source: Object, path: Path) -> ErrorList:
    name, namespace = source.get("volumeName") or "", source.get("volumeNamespace") or ""
    errs = _dns_label(name, path.child("volumeName")) if name else [field.required(path.child("volumeName"), "")]
    if namespace:
        errs += _dns_label(namespace, path.child("volumeNamespace"))
    return errs + _secret_ref_named(source, path, True)


def validate_csi_driver_name(driver: str, path: Path) -> ErrorList:
    """ValidateCSIDriverName."""
    errs: ErrorList = [] if driver else [field.required(path, "")]
    if len(driver) > 63:
        errs.append(field.too_long(path, driver, 63))
    return errs + [field.invalid(path, driver, m) for m in validation.is_dns1123_subdomain(driver.lower())]


CSI_SECRETS = ("controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef",
               "nodeExpandSecretRef")


def _csi(source: Object, path: Path) -> ErrorList:
    errs = validate_csi_driver_name(source.get("driver") or "", path.child("driver"))
    errs += _required(source, path, "volumeHandle")
    for key in CSI_SECRETS:
        if isinstance(source.get(key), dict):
            errs += validate_secret_reference(source[key], path.child(key))
    return errs


def _fields(*keys: str) -> Check:
    return lambda source, path: _required(source, path, *keys)


# (source, path of its "more than 1 volume type" error, path its own checks use, check), in the order
# ValidatePersistentVolumeSpec visits them.
SOURCES: tuple[tuple[str, str, str, Check], ...] = (
    ("hostPath", "hostPath", "hostPath", _pod("hostPath")),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", _pod("gcePersistentDisk")),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", _pod("awsElasticBlockStore")),
    ("glusterfs", "glusterfs", "glusterfs", _glusterfs),
    ("flocker", "flocker", "flocker", _pod("flocker")),
    ("nfs", "nfs", "nfs", _pod("nfs")),
    ("rbd", "rbd", "rbd", _fields("monitors", "image")),
    ("quobyte", "quobyte", "quobyte", _pod("quobyte")),
    ("cephfs", "cephFS", "cephfs", _fields("monitors")),
    ("iscsi", "iscsi", "iscsi", _pod("iscsi")),
    ("cinder", "cinder", "cinder", _cinder),
    ("fc", "fc", "fc", _pod("fc")),
    ("flexVolume", "", "flexVolume", _flex),
    ("azureFile", "azureFile", "azureFile", _azure_file),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", _pod("vsphereVolume")),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", _pod("photonPersistentDisk")),
    ("portworxVolume", "portworxVolume", "portworxVolume", _pod("portworxVolume")),
    ("azureDisk", "azureDisk", "azureDisk", _pod("azureDisk")),
    ("scaleIO", "scaleIO", "scaleIO", _fields("gateway", "system", "volumeName")),
    ("local", "local", "local", _local),
    ("storageos", "storageos", "storageos", _storageos),
    ("csi", "csi", "csi", _csi),
)
SOURCE_KEYS = tuple(key for key, _, _, _ in SOURCES)


def validate_sources(spec: Object, path: Path) -> tuple[int, ErrorList]:
    """How many sources the spec names, and the errors: only the first is checked, each later one is
    refused (a flexVolume is always counted and checked, as in Kubernetes)."""
    errs: ErrorList = []
    count = 0
    for key, duplicate_path, check_path, check in SOURCES:
        source = spec.get(key)
        if source is None:
            continue
        if count and duplicate_path:
            errs.append(field.forbidden(path.child(duplicate_path), "may not specify more than 1 volume type"))
            continue
        count += 1
        errs += check(source if isinstance(source, dict) else {}, path.child(check_path))
    return count, errs
