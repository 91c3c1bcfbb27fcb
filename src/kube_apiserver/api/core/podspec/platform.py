"""spec.os: which operating system the pod runs on, and the fields each one forbids
(validateOS, validateLinux, validateWindows)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions

Object = dict[str, Any]
OS_NAMES = ("linux", "windows")
WINDOWS_FORBIDDEN_POD_CONTEXT = ("appArmorProfile", "seLinuxOptions", "seccompProfile", "fsGroup", "fsGroupChangePolicy",
                                 "sysctls", "runAsUser", "runAsGroup", "supplementalGroups",
                                 "supplementalGroupsPolicy", "seLinuxChangePolicy")
WINDOWS_FORBIDDEN_SPEC = ("hostUsers", "hostPID", "hostIPC", "shareProcessNamespace")
WINDOWS_FORBIDDEN_CONTAINER = ("appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities",
                               "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
                               "runAsUser", "runAsGroup")
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _containers(spec: Object, path: Path) -> list[tuple[Object, Path]]:
    out = []
    for key in CONTAINER_LISTS:
        for i, container in enumerate(spec.get(key) or []):
            if isinstance(container, dict):
                out.append((container.get("securityContext") or {}, path.child(key).index(i)))
    return out


def _linux(spec: Object, path: Path) -> ErrorList:
    message = "windows options cannot be set for a linux pod"
    errs: ErrorList = []
    if (spec.get("securityContext") or {}).get("windowsOptions") is not None:
        errs.append(field.forbidden(path.child("securityContext", "windowsOptions"), message))
    for context, container_path in _containers(spec, path):
        if context.get("windowsOptions") is not None:
            errs.append(field.forbidden(container_path.child("securityContext", "windowsOptions"), message))
    return errs


def _windows(spec: Object, path: Path) -> ErrorList:
    message = "cannot be set for a windows pod"
    context = spec.get("securityContext") or {}
    errs = [field.forbidden(path.child("securityContext", key), message) for key in WINDOWS_FORBIDDEN_POD_CONTEXT
            if (context.get(key) if key == "sysctls" else context.get(key) is not None)]
    errs += [field.forbidden(path.child(key), message) for key in WINDOWS_FORBIDDEN_SPEC
             if (spec.get(key) if key in ("hostPID", "hostIPC") else spec.get(key) is not None)]
    for container_context, container_path in _containers(spec, path):
        errs += [field.forbidden(container_path.child("securityContext", key), message)
                 for key in WINDOWS_FORBIDDEN_CONTAINER if container_context.get(key) is not None]
    return errs


def validate_os(spec: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    os_ = spec.get("os")
    if not isinstance(os_, dict):
        return []
    name = os_.get("name") or ""
    if not name:
        return [field.required(path.child("os", "name"), "cannot be empty")]
    if name not in OS_NAMES:
        return [field.not_supported(path.child("os"), name, OS_NAMES)]
    return _linux(spec, path) if name == "linux" else _windows(spec, path)
