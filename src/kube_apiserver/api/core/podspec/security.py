"""Pod and container security contexts (validatePodSpecSecurityContext, ValidateSecurityContext)."""

from __future__ import annotations

import re
from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions, allow_privileged
from .paths import local_descending

Object = dict[str, Any]
SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
APPARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
PROC_MOUNTS = ("Default", "Unmasked")
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")
SUPPLEMENTAL_GROUPS_POLICIES = ("Merge", "Strict")
SELINUX_CHANGE_POLICIES = ("MountOption", "Recursive")
SYSCTL_MAX_LENGTH = 253
SYSCTL_PATTERN = r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
_SYSCTL = re.compile(SYSCTL_PATTERN)
NET_SYSCTL_PREFIXES = ("net.",)
IPC_SYSCTLS = ("kernel.shmmax", "kernel.shmall", "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.msgmax",
               "kernel.msgmnb", "kernel.msgmni", "kernel.sem")


def _ids(context: Object, path: Path, keys: tuple[str, ...]) -> ErrorList:
    errs: ErrorList = []
    for key in keys:
        value = context.get(key)
        if isinstance(value, int):
            errs += [field.invalid(path.child(key), value, m) for m in validation.is_in_range(value, 0, 2147483647)]
    return errs


def validate_seccomp_profile(profile: Any, path: Path) -> ErrorList:
    if not isinstance(profile, dict):
        return []
    kind = profile.get("type") or ""
    errs: ErrorList = []
    if not kind:
        errs.append(field.required(path.child("type"), "type is required when seccompProfile is set"))
    elif kind not in SECCOMP_TYPES:
        errs.append(field.not_supported(path.child("type"), kind, SECCOMP_TYPES))
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            errs.append(field.required(path.child("localhostProfile"), "must be set when seccomp type is Localhost"))
        else:
            errs += local_descending(local, path.child("localhostProfile"))
    elif local is not None:
        errs.append(field.invalid(path.child("localhostProfile"), profile,
                                  "can only be set when seccomp type is Localhost"))
    return errs


def validate_apparmor_profile(profile: Any, path: Path) -> ErrorList:
    if not isinstance(profile, dict):
        return []
    kind, local = profile.get("type") or "", profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None or not local.strip():
            return [field.required(path.child("localhostProfile"), "must be set when AppArmor type is Localhost")]
        if local.strip() != local:
            return [field.invalid(path.child("localhostProfile"), local, "must not be padded with whitespace")]
        return [field.too_long(path.child("localhostProfile"), "", 4095)] if len(local) > 4095 else []
    if kind in ("RuntimeDefault", "Unconfined"):
        return [field.invalid(path.child("localhostProfile"), local, "can only be set when AppArmor type is "
                                                                      "Localhost")] if local is not None else []
    if not kind:
        return [field.required(path.child("type"), "type is required when appArmorProfile is set")]
    return [field.not_supported(path.child("type"), kind, APPARMOR_TYPES)]


def _sysctls(context: Object, spec: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    names: set[str] = set()
    for i, sysctl in enumerate(context.get("sysctls") or []):
        name, name_path = sysctl.get("name") or "", path.index(i).child("name")
        if not name:
            errs.append(field.required(name_path, ""))
        elif len(name) > SYSCTL_MAX_LENGTH or not _SYSCTL.match(name):
            errs.append(field.invalid(name_path, name, f"must have at most {SYSCTL_MAX_LENGTH} characters and match "
                                                       f"regex {SYSCTL_PATTERN}"))
        elif name in names:
            errs.append(field.duplicate(name_path, name))
        if not opts.allow_namespaced_sysctls_for_host_net_and_host_ipc:
            normalized = name.replace("/", ".")
            if spec.get("hostNetwork") and normalized.startswith(NET_SYSCTL_PREFIXES):
                errs.append(field.invalid(name_path, name, "may not be specified when 'hostNetwork' is true"))
            elif spec.get("hostIPC") and (normalized in IPC_SYSCTLS or normalized.startswith("fs.mqueue.")):
                errs.append(field.invalid(name_path, name, "may not be specified when 'hostIPC' is true"))
        names.add(name)
    return errs


def _choice(context: Object, key: str, choices: tuple[str, ...], path: Path) -> ErrorList:
    value = context.get(key)
    if value is not None and value not in choices:
        return [field.not_supported(path.child(key), value, choices)]
    return []


def validate_pod_security_context(spec: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    context = spec.get("securityContext")
    if not isinstance(context, dict):
        return []
    errs = _ids(context, path, ("fsGroup", "runAsUser", "runAsGroup"))
    for i, gid in enumerate(context.get("supplementalGroups") or []):
        errs += [field.invalid(path.child("supplementalGroups").index(i), gid, m)
                 for m in validation.is_in_range(gid, 0, 2147483647)]
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        errs.append(field.invalid(path.child("shareProcessNamespace"), True,
                                  "ShareProcessNamespace and HostPID cannot both be enabled"))
    errs += _sysctls(context, spec, path.child("sysctls"), opts)
    errs += _choice(context, "fsGroupChangePolicy", FS_GROUP_CHANGE_POLICIES, path)
    errs += validate_seccomp_profile(context.get("seccompProfile"), path.child("seccompProfile"))
    errs += validate_apparmor_profile(context.get("appArmorProfile"), path.child("appArmorProfile"))
    errs += _choice(context, "supplementalGroupsPolicy", SUPPLEMENTAL_GROUPS_POLICIES, path)
    return errs + _choice(context, "seLinuxChangePolicy", SELINUX_CHANGE_POLICIES, path)


def validate_security_context(context: Any, path: Path, host_users: bool) -> ErrorList:
    """ValidateSecurityContext of a container."""
    if not isinstance(context, dict):
        return []
    errs: ErrorList = []
    if context.get("privileged") and not allow_privileged():
        errs.append(field.forbidden(path.child("privileged"), "disallowed by cluster policy"))
    errs += _ids(context, path, ("runAsUser", "runAsGroup"))
    proc_mount = context.get("procMount")
    if proc_mount is not None:
        errs += _choice(context, "procMount", PROC_MOUNTS, path)
        if host_users and proc_mount == "Unmasked":
            errs.append(field.invalid(path.child("procMount"), proc_mount, "`hostUsers` must be false to use "
                                                                            "`Unmasked`"))
    errs += validate_seccomp_profile(context.get("seccompProfile"), path.child("seccompProfile"))
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged"):
            errs.append(field.invalid(path, context, "cannot set `allowPrivilegeEscalation` to false and "
                                                     "`privileged` to true"))
        if "CAP_SYS_ADMIN" in ((context.get("capabilities") or {}).get("add") or []):
            errs.append(field.invalid(path, context, "cannot set `allowPrivilegeEscalation` to false and "
                                                     "`capabilities.Add` CAP_SYS_ADMIN"))
    return errs + validate_apparmor_profile(context.get("appArmorProfile"), path.child("appArmorProfile"))


def validate_host_users(spec: Object, path: Path) -> ErrorList:
    """validateHostUsers: user namespaces exclude the host's other namespaces."""
    if spec.get("hostUsers") is not False:
        return []
    errs: ErrorList = []
    for key, name in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
        if spec.get(key):
            errs.append(field.forbidden(path.child(name), "when `pod.Spec.HostUsers` is false"))
    return errs
