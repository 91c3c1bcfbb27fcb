"""volumeMounts and volumeDevices (ValidateVolumeMounts, ValidateVolumeDevices)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....apimachinery.field import ErrorList, Path
from .paths import local_descending, no_backsteps

Object = dict[str, Any]
PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")


def _propagation(mount: Object, container: Object, path: Path) -> ErrorList:
    mode = mount.get("mountPropagation")
    if mode is None:
        return []
    errs: ErrorList = []
    if mode not in PROPAGATIONS:
        errs.append(field.not_supported(path, mode, PROPAGATIONS))
    privileged = bool((container.get("securityContext") or {}).get("privileged"))
    if mode == "Bidirectional" and not privileged:
        errs.append(field.forbidden(path, "Bidirectional mount propagation is available only to privileged containers"))
    return errs


def _recursive_read_only(mount: Object, path: Path) -> ErrorList:
    mode = mount.get("recursiveReadOnly")
    if mode is None or mode == "Disabled":
        return []
    if mode not in RECURSIVE_READ_ONLY:
        return [field.not_supported(path, mode, RECURSIVE_READ_ONLY)]
    errs: ErrorList = []
    if not mount.get("readOnly"):
        errs.append(field.forbidden(path, "may only be specified when readOnly is true"))
    if mount.get("mountPropagation") not in (None, "None"):
        errs.append(field.forbidden(path, "may only be specified when mountPropagation is None or not specified"))
    return errs


def _mount(mount: Object, i: int, volumes: dict[str, Object], devices: dict[str, str], container: Object,
           path: Path, seen: set[str]) -> ErrorList:
    idx, name, mount_path = path.index(i), mount.get("name") or "", mount.get("mountPath") or ""
    errs: ErrorList = [] if name else [field.required(idx.child("name"), "")]
    if name not in volumes:
        errs.append(field.not_found(idx.child("name"), name))
    if not mount_path:
        errs.append(field.required(idx.child("mountPath"), ""))
    if mount_path in seen:
        errs.append(field.invalid(idx.child("mountPath"), mount_path, "must be unique"))
    seen.add(mount_path)
    if name in devices:
        errs.append(field.invalid(idx.child("name"), name, "must not already exist in volumeDevices"))
    if mount_path in devices.values():
        errs.append(field.invalid(idx.child("mountPath"), mount_path, "must not already exist as a path in "
                                                                       "volumeDevices"))
    if volumes.get(name, {}).get("image") is not None:
        for key in ("subPath", "subPathExpr"):
            if mount.get(key):
                errs.append(field.invalid(idx.child(key), mount[key], "not allowed in image volume sources"))
    if mount.get("subPath"):
        errs += local_descending(mount["subPath"], path.child("subPath"))
    if mount.get("subPathExpr"):
        if mount.get("subPath"):
            errs.append(field.invalid(idx.child("subPathExpr"), mount["subPathExpr"],
                                      "subPathExpr and subPath are mutually exclusive"))
        errs += local_descending(mount["subPathExpr"], path.child("subPathExpr"))
    errs += _propagation(mount, container, path.child("mountPropagation"))
    return errs + _recursive_read_only(mount, path.child("recursiveReadOnly"))


def validate_volume_mounts(container: Object, volumes: dict[str, Object], path: Path) -> ErrorList:
    devices = {d.get("name", ""): d.get("devicePath", "") for d in container.get("volumeDevices") or []}
    errs: ErrorList = []
    seen: set[str] = set()
    for i, mount in enumerate(container.get("volumeMounts") or []):
        errs += _mount(mount, i, volumes, devices, container, path, seen)
    return errs


def _device(device: Object, idx: Path, volumes: dict[str, Object], mounts: dict[str, str], names: set[str],
            paths: set[str], path: Path) -> ErrorList:
    name, device_path = device.get("name") or "", device.get("devicePath") or ""
    volume = volumes.get(name)
    errs: ErrorList = [] if name else [field.required(idx.child("name"), "")]
    if name in names:
        errs.append(field.invalid(idx.child("name"), name, "must be unique"))
    if volume is not None and volume.get("persistentVolumeClaim") is None and volume.get("ephemeral") is None:
        errs.append(field.invalid(idx.child("name"), name, "can only use volume source type of PersistentVolumeClaim "
                                                            "or Ephemeral for block mode"))
    if volume is None:
        errs.append(field.not_found(idx.child("name"), name))
    if not device_path:
        errs.append(field.required(idx.child("devicePath"), ""))
    if device_path in paths:
        errs.append(field.invalid(idx.child("devicePath"), device_path, "must be unique"))
    if device_path and no_backsteps(device_path, path.child("devicePath")):
        errs.append(field.invalid(idx.child("devicePath"), device_path, "can not contain backsteps ('..')"))
    else:
        paths.add(device_path)
    if name in mounts:
        errs.append(field.invalid(idx.child("name"), name, "must not already exist in volumeMounts"))
    if device_path in mounts.values():
        errs.append(field.invalid(idx.child("devicePath"), device_path, "must not already exist as a path in "
                                                                         "volumeMounts"))
    if name:
        names.add(name)
    return errs


def validate_volume_devices(container: Object, volumes: dict[str, Object], path: Path) -> ErrorList:
    mounts = {m.get("name", ""): m.get("mountPath", "") for m in container.get("volumeMounts") or []}
    names: set[str] = set()
    paths: set[str] = set()
    errs: ErrorList = []
    for i, device in enumerate(container.get("volumeDevices") or []):
        errs += _device(device, path.index(i), volumes, mounts, names, paths, path)
    return errs
