"""Validation of each volume source (validate*VolumeSource in pkg/apis/core/validation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....apimachinery import field, quantity, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions
from .paths import file_mode, local_descending, no_backsteps
from .projections import validate_downward_api_file, validate_key_to_path, validate_projected

Object = dict[str, Any]
Check = Callable[[Object, Path, PodValidationOptions], ErrorList]
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                   "Socket")
PARTITION_ERROR = validation.inclusive_range_error(1, 255)
PULL_POLICIES = ("Always", "IfNotPresent", "Never")


def _required(source: Object, path: Path, *keys: str) -> ErrorList:
    return [field.required(path.child(k), "") for k in keys if not source.get(k)]


def _partition(source: Object, path: Path) -> ErrorList:
    partition = source.get("partition") or 0
    return [field.invalid(path.child("partition"), partition, PARTITION_ERROR)] if not 0 <= partition <= 255 else []


def _empty_dir(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    limit = source.get("sizeLimit")
    try:
        negative = limit is not None and quantity.parse(limit).sign() < 0
    except quantity.QuantityError:
        negative = False
    if negative:
        return [field.forbidden(path.child("sizeLimit"), "SizeLimit field must be a valid resource quantity")]
    return []


def _host_path(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    if not source.get("path"):
        return [field.required(path.child("path"), "")]
    errs = no_backsteps(source["path"], path.child("path"))
    kind = source.get("type")
    if kind is not None and kind not in HOST_PATH_TYPES:
        errs.append(field.not_supported(path.child("type"), kind, HOST_PATH_TYPES))
    return errs


def _git_repo(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    return _required(source, path, "repository") + local_descending(source.get("directory") or "",
                                                                    path.child("directory"))


def _disk(key: str) -> Check:
    return lambda source, path, opts: _required(source, path, key) + _partition(source, path)


def _items(source: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, item in enumerate(source.get("items") or []):
        errs += validate_key_to_path(item, path.child("items").index(i))
    return errs


def _secret(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = _required(source, path, "secretName")
    return errs + file_mode(source.get("defaultMode"), path.child("defaultMode")) + _items(source, path)


def _config_map(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = _required(source, path, "name")
    return errs + file_mode(source.get("defaultMode"), path.child("defaultMode")) + _items(source, path)


def _nfs(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = _required(source, path, "server", "path")
    if not str(source.get("path") or "").startswith("/"):
        errs.append(field.invalid(path.child("path"), source.get("path") or "", "must be an absolute path"))
    return errs


def _iscsi(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = _required(source, path, "targetPortal", "iqn")
    iqn = source.get("iqn") or ""
    if iqn and not iqn.startswith(("iqn", "eui", "naa")):
        errs.append(field.invalid(path.child("iqn"), iqn, "must be valid format starting with iqn, eui, or naa"))
    lun = source.get("lun") or 0
    if not 0 <= lun <= 255:
        errs.append(field.invalid(path.child("lun"), lun, validation.inclusive_range_error(0, 255)))
    if (source.get("chapAuthDiscovery") or source.get("chapAuthSession")) and source.get("secretRef") is None:
        errs.append(field.required(path.child("secretRef"), ""))
    return errs


def _flocker(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    name, uuid = source.get("datasetName") or "", source.get("datasetUUID") or ""
    errs: ErrorList = []
    if not name and not uuid:
        errs.append(field.required(path, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        errs.append(field.invalid(path, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
    if "/" in name:
        errs.append(field.invalid(path.child("datasetName"), name, "must not contain '/'"))
    return errs


def _quobyte(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    if not source.get("registry"):
        errs.append(field.required(path.child("registry"),
                                   "must be a host:port pair or multiple pairs separated by commas"))
    return errs + _required(source, path, "volume")


def _downward_api(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = file_mode(source.get("defaultMode"), path.child("defaultMode"))
    for item in source.get("items") or []:
        errs += validate_downward_api_file(item, path, opts)
    return errs


def _fc(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    wwns, wwids = source.get("targetWWNs") or [], source.get("wwids") or []
    errs: ErrorList = []
    if not wwns and not wwids:
        errs.append(field.required(path.child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
    if wwns and wwids:
        errs.append(field.invalid(path.child("targetWWNs"), wwns,
                                  "targetWWNs and wwids can not be specified simultaneously"))
    if wwns and source.get("lun") is None:
        errs.append(field.required(path.child("lun"), "lun is required if targetWWNs is specified"))
    elif wwns and not 0 <= source["lun"] <= 255:
        errs.append(field.invalid(path.child("lun"), source["lun"], validation.inclusive_range_error(0, 255)))
    return errs


def _csi(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    driver = source.get("driver") or ""
    errs: ErrorList = [] if driver else [field.required(path.child("driver"), "")]
    if len(driver) > 63:
        errs.append(field.too_long(path.child("driver"), "", 63))
    errs += [field.invalid(path.child("driver"), driver, m) for m in validation.is_dns1123_subdomain(driver.lower())]
    secret = source.get("nodePublishSecretRef")
    if isinstance(secret, dict) and not secret.get("name"):
        errs.append(field.required(path.child("nodePublishSecretRef", "name"), ""))
    return errs


def _ephemeral(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    if source.get("volumeClaimTemplate") is None:
        return [field.required(path.child("volumeClaimTemplate"), "")]
    return []


def _image(source: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    if opts.resource_is_pod and not source.get("reference"):
        errs.append(field.required(path.child("reference"), ""))
    policy = source.get("pullPolicy") or ""
    if policy and policy not in PULL_POLICIES:
        errs.append(field.not_supported(path.child("pullPolicy"), policy, PULL_POLICIES))
    return errs


def _fields(*keys: str) -> Check:
    return lambda source, path, opts: _required(source, path, *keys)


# (source, path used in its "more than 1 volume type" error, path its own checks use, check), in the
# order validateVolumeSource visits them.
SOURCES: tuple[tuple[str, str, str, Check], ...] = (
    ("emptyDir", "emptyDir", "emptyDir", _empty_dir),
    ("hostPath", "hostPath", "hostPath", _host_path),
    ("gitRepo", "gitRepo", "gitRepo", _git_repo),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", _disk("pdName")),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", _disk("volumeID")),
    ("secret", "secret", "secret", _secret),
    ("nfs", "nfs", "nfs", _nfs),
    ("iscsi", "iscsi", "iscsi", _iscsi),
    ("glusterfs", "glusterfs", "glusterfs", _fields("endpoints", "path")),
    ("flocker", "flocker", "flocker", _flocker),
    ("persistentVolumeClaim", "persistentVolumeClaim", "persistentVolumeClaim", _fields("claimName")),
    ("rbd", "rbd", "rbd", _fields("monitors", "image")),
    ("cinder", "cinder", "cinder", _fields("volumeID")),
    ("cephfs", "cephFS", "cephfs", _fields("monitors")),
    ("quobyte", "quobyte", "quobyte", _quobyte),
    ("downwardAPI", "downwarAPI", "downwardAPI", _downward_api),
    ("fc", "fc", "fc", _fc),
    ("flexVolume", "flexVolume", "flexVolume", _fields("driver")),
    ("configMap", "configMap", "configMap", _config_map),
    ("azureFile", "azureFile", "azureFile", _fields("secretName", "shareName")),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", _fields("volumePath")),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", _fields("pdID")),
    ("portworxVolume", "portworxVolume", "portworxVolume", _fields("volumeID")),
    ("azureDisk", "azureDisk", "azureDisk", _fields("diskName", "diskURI")),
    ("storageos", "storageos", "storageos", _fields("volumeName")),
    ("projected", "projected", "projected", validate_projected),
    ("scaleIO", "scaleIO", "scaleIO", _fields("gateway", "system", "volumeName")),
    ("csi", "csi", "csi", _csi),
    ("ephemeral", "ephemeral", "ephemeral", _ephemeral),
    ("image", "image", "image", _image),
)


def validate_volume_source(volume: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    """validateVolumeSource: exactly one source, each checked."""
    errs: ErrorList = []
    count = 0
    for key, duplicate_path, check_path, check in SOURCES:
        source = volume.get(key)
        if source is None:
            continue
        if count:
            errs.append(field.forbidden(path.child(duplicate_path), "may not specify more than 1 volume type"))
            continue
        count += 1
        errs += check(source if isinstance(source, dict) else {}, path.child(check_path), opts)
    if not count:
        errs.append(field.required(path, "must specify a volume type"))
    return errs


