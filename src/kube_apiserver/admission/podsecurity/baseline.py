"""The baseline Pod Security checks (pod-security-admission policy/check_*.go), each with the policy versions
it changed at. Reasons and details are Kubernetes' own: clients and tests match them."""

from __future__ import annotations

from .api import BASELINE
from .checks import (
    ALLOWED,
    Check,
    CheckResult,
    Object,
    VersionedCheck,
    annotation,
    containers,
    containers_phrase,
    forbid,
    join_quote,
    name_of,
    pluralize,
    sub,
    v1,
)

APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
ALLOWED_PROFILE_TYPES = ("RuntimeDefault", "Localhost")
DEFAULT_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                  "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
SELINUX_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
SELINUX_TYPES_1_31 = SELINUX_TYPES_1_0 | {"container_engine_t"}
SYSCTLS_1_0 = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                         "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"})
SYSCTLS_1_27 = SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SYSCTLS_1_29 = SYSCTLS_1_27 | {"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                               "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SYSCTLS_1_32 = SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def _context(obj: Object) -> Object | None:
    return sub(obj, "securityContext")


def _setters(pod_bad: bool, bad_containers: list[str]) -> list[str]:
    """`pod`, `container "a"`: who set a forbidden value."""
    return (["pod"] if pod_bad else []) + ([containers_phrase(bad_containers)] if bad_containers else [])


def app_armor_profile_1_0(meta: Object, spec: Object) -> CheckResult:
    bad_values: set[str] = set()

    def bad(obj: Object | None) -> bool:
        profile = sub(_context(obj or {}), "appArmorProfile")
        if profile is None or profile.get("type") in ALLOWED_PROFILE_TYPES:
            return False
        bad_values.add(str(profile.get("type") or ""))
        return True

    setters = _setters(bad(spec), [name_of(c) for c in containers(spec) if bad(c)])
    annotations = sorted(annotation(k, v) for k, v in ((meta.get("annotations") or {}).items())
                         if k.startswith(APPARMOR_ANNOTATION_PREFIX)
                         and not (not v or v == "runtime/default" or v.startswith("localhost/")))
    values = sorted(bad_values) + annotations
    if annotations:
        setters.append(pluralize("annotation", "annotations", len(annotations)))
    if not setters:
        return ALLOWED
    return forbid(pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
                  f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(values)}")


def capabilities_baseline_1_0(meta: Object, spec: Object) -> CheckResult:
    bad_containers, added = [], set()
    for container in containers(spec):
        caps = sub(_context(container), "capabilities")
        forbidden = [str(c) for c in (caps or {}).get("add") or () if c not in DEFAULT_CAPABILITIES]
        if forbidden:
            bad_containers.append(name_of(container))
            added.update(forbidden)
    if not bad_containers:
        return ALLOWED
    return forbid("non-default capabilities", f"{containers_phrase(bad_containers)} must not include "
                                              f"{join_quote(sorted(added))} in securityContext.capabilities.add")


def host_namespaces_1_0(meta: Object, spec: Object) -> CheckResult:
    shared = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key) is True]
    return forbid("host namespaces", ", ".join(shared)) if shared else ALLOWED


def host_path_volumes_1_0(meta: Object, spec: Object) -> CheckResult:
    names = [str(v.get("name") or "") for v in spec.get("volumes") or () if sub(v, "hostPath") is not None]
    if not names:
        return ALLOWED
    return forbid("hostPath volumes", f"{pluralize('volume', 'volumes', len(names))} {join_quote(names)}")


def host_ports_1_0(meta: Object, spec: Object) -> CheckResult:
    bad_containers, ports = [], set()
    for container in containers(spec):
        used = {str(port["hostPort"]) for port in container.get("ports") or ()
                if isinstance(port, dict) and port.get("hostPort")}
        if used:
            bad_containers.append(name_of(container))
            ports |= used
    if not bad_containers:
        return ALLOWED
    count = len(bad_containers)
    return forbid("hostPort", f"{containers_phrase(bad_containers)} {pluralize('uses', 'use', count)} "
                              f"{pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}")


def _handler_hosts(handler: Object | None) -> list[str]:
    """Hosts an httpGet or tcpSocket handler (probe or lifecycle hook) connects to, when set."""
    hosts = [(sub(handler, kind) or {}).get("host") for kind in ("httpGet", "tcpSocket")]
    return [str(host) for host in hosts if host]


def host_probes_and_host_lifecycle_1_34(meta: Object, spec: Object) -> CheckResult:
    bad_containers, hosts = set(), set()
    for container in containers(spec):
        lifecycle = sub(container, "lifecycle")
        handlers = [sub(container, probe) for probe in ("livenessProbe", "readinessProbe", "startupProbe")]
        handlers += [sub(lifecycle, hook) for hook in ("postStart", "preStop")]
        found = [host for handler in handlers for host in _handler_hosts(handler)]
        if found:
            bad_containers.add(name_of(container))
            hosts.update(found)
    if not bad_containers:
        return ALLOWED
    count = len(bad_containers)
    return forbid("probe or lifecycle host",
                  f"{pluralize('container', 'containers', count)} {join_quote(sorted(bad_containers))} "
                  f"{pluralize('uses', 'use', count)} "
                  f"{pluralize('probe or lifecycle host', 'probe or lifecycle hosts', len(hosts))} "
                  f"{join_quote(sorted(hosts))}")


def privileged_1_0(meta: Object, spec: Object) -> CheckResult:
    bad = [name_of(c) for c in containers(spec) if (_context(c) or {}).get("privileged") is True]
    if not bad:
        return ALLOWED
    return forbid("privileged", f"{containers_phrase(bad)} must not set securityContext.privileged=true")


def proc_mount_1_0(meta: Object, spec: Object) -> CheckResult:
    bad_containers, types = [], set()
    for container in containers(spec):
        proc_mount = (_context(container) or {}).get("procMount")
        if proc_mount is not None and proc_mount != "Default":
            bad_containers.append(name_of(container))
            types.add(str(proc_mount))
    if not bad_containers:
        return ALLOWED
    return forbid("procMount", f"{containers_phrase(bad_containers)} must not set securityContext.procMount to "
                               f"{join_quote(sorted(types))}")


def _se_linux_options(spec: Object, allowed_types: frozenset[str]) -> CheckResult:
    bad_types: set[str] = set()
    user_set = role_set = False

    def bad(obj: Object) -> bool:
        nonlocal user_set, role_set
        opts = sub(_context(obj), "seLinuxOptions")
        if opts is None:
            return False
        invalid = False
        if (opts.get("type") or "") not in allowed_types:
            invalid = True
            bad_types.add(str(opts.get("type") or ""))
        if opts.get("user"):
            invalid = user_set = True
        if opts.get("role"):
            invalid = role_set = True
        return invalid

    setters = _setters(bad(spec), [name_of(c) for c in containers(spec) if bad(c)])
    if not setters:
        return ALLOWED
    data = [f"{pluralize('type', 'types', len(bad_types))} {join_quote(sorted(bad_types))}"] if bad_types else []
    data += ["user may not be set"] if user_set else []
    data += ["role may not be set"] if role_set else []
    return forbid("seLinuxOptions", f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: "
                                    f"{'; '.join(data)}")


def se_linux_options_1_0(meta: Object, spec: Object) -> CheckResult:
    return _se_linux_options(spec, SELINUX_TYPES_1_0)


def se_linux_options_1_31(meta: Object, spec: Object) -> CheckResult:
    return _se_linux_options(spec, SELINUX_TYPES_1_31)


def _valid_seccomp_annotation(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_profile_baseline_1_0(meta: Object, spec: Object) -> CheckResult:
    annotations = meta.get("annotations") or {}
    keys = [SECCOMP_POD_ANNOTATION] + [SECCOMP_CONTAINER_ANNOTATION_PREFIX + name_of(c) for c in containers(spec)]
    forbidden = {annotation(k, annotations[k]) for k in keys
                 if k in annotations and not _valid_seccomp_annotation(annotations[k])}
    if not forbidden:
        return ALLOWED
    return forbid("seccompProfile", f"forbidden {pluralize('annotation', 'annotations', len(forbidden))} "
                                    f"{', '.join(sorted(forbidden))}")


def seccomp_type(obj: Object) -> tuple[bool, str]:
    """(set, type) of obj.securityContext.seccompProfile."""
    profile = sub(_context(obj), "seccompProfile")
    return profile is not None, str((profile or {}).get("type") or "")


def seccomp_setters(spec: Object) -> tuple[list[str], set[str]]:
    """Who sets a seccomp profile type other than RuntimeDefault or Localhost, and those types."""
    bad_values: set[str] = set()

    def bad(obj: Object) -> bool:
        is_set, kind = seccomp_type(obj)
        if is_set and kind not in ALLOWED_PROFILE_TYPES:
            bad_values.add(kind)
            return True
        return False

    return _setters(bad(spec), [name_of(c) for c in containers(spec) if bad(c)]), bad_values


def seccomp_forbidden(setters: list[str], values: set[str]) -> CheckResult:
    return forbid("seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
                                    f"{join_quote(sorted(values))}")


def seccomp_profile_baseline_1_19(meta: Object, spec: Object) -> CheckResult:
    setters, values = seccomp_setters(spec)
    return seccomp_forbidden(setters, values) if setters else ALLOWED


def _sysctls(spec: Object, allowed: frozenset[str]) -> CheckResult:
    sysctls = (sub(spec, "securityContext") or {}).get("sysctls") or ()
    forbidden = [str(s.get("name") or "") for s in sysctls if isinstance(s, dict) and s.get("name") not in allowed]
    return forbid("forbidden sysctls", ", ".join(forbidden)) if forbidden else ALLOWED


def sysctls_1_0(meta: Object, spec: Object) -> CheckResult:
    return _sysctls(spec, SYSCTLS_1_0)


def sysctls_1_27(meta: Object, spec: Object) -> CheckResult:
    return _sysctls(spec, SYSCTLS_1_27)


def sysctls_1_29(meta: Object, spec: Object) -> CheckResult:
    return _sysctls(spec, SYSCTLS_1_29)


def sysctls_1_32(meta: Object, spec: Object) -> CheckResult:
    return _sysctls(spec, SYSCTLS_1_32)


def windows_host_process_1_0(meta: Object, spec: Object) -> CheckResult:
    def host_process(obj: Object) -> bool:
        return (sub(_context(obj), "windowsOptions") or {}).get("hostProcess") is True

    setters = _setters(host_process(spec), [name_of(c) for c in containers(spec) if host_process(c)])
    if not setters:
        return ALLOWED
    return forbid("hostProcess",
                  f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true")


def _check(check_id: str, *versions: VersionedCheck) -> Check:
    return Check(check_id, BASELINE, versions)


CHECK_CAPABILITIES_BASELINE = "capabilities_baseline"
CHECK_HOST_PATH_VOLUMES = "hostPathVolumes"
CHECK_SECCOMP_BASELINE = "seccompProfile_baseline"

BASELINE_CHECKS = (
    _check("appArmorProfile", VersionedCheck(v1(0), app_armor_profile_1_0)),
    _check(CHECK_CAPABILITIES_BASELINE, VersionedCheck(v1(0), capabilities_baseline_1_0)),
    _check("hostNamespaces", VersionedCheck(v1(0), host_namespaces_1_0)),
    _check(CHECK_HOST_PATH_VOLUMES, VersionedCheck(v1(0), host_path_volumes_1_0)),
    _check("hostPorts", VersionedCheck(v1(0), host_ports_1_0)),
    _check("hostProbesAndHostLifecycle", VersionedCheck(v1(34), host_probes_and_host_lifecycle_1_34)),
    _check("privileged", VersionedCheck(v1(0), privileged_1_0)),
    _check("procMount", VersionedCheck(v1(0), proc_mount_1_0)),
    _check("seLinuxOptions", VersionedCheck(v1(0), se_linux_options_1_0),
           VersionedCheck(v1(31), se_linux_options_1_31)),
    _check(CHECK_SECCOMP_BASELINE, VersionedCheck(v1(0), seccomp_profile_baseline_1_0),
           VersionedCheck(v1(19), seccomp_profile_baseline_1_19)),
    _check("sysctls", VersionedCheck(v1(0), sysctls_1_0), VersionedCheck(v1(27), sysctls_1_27),
           VersionedCheck(v1(29), sysctls_1_29), VersionedCheck(v1(32), sysctls_1_32)),
    _check("windowsHostProcess", VersionedCheck(v1(0), windows_host_process_1_0)),
)
