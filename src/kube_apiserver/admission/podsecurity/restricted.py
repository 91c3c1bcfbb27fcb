"""The restricted Pod Security checks (pod-security-admission policy/check_*.go). Some replace a baseline
check from their first version on (OverrideCheckIDs); the v1.25 revisions allow pods whose spec.os is windows
(those settings are Linux-only)."""

from __future__ import annotations

from .api import RESTRICTED
from .baseline import (
    CHECK_CAPABILITIES_BASELINE,
    CHECK_HOST_PATH_VOLUMES,
    CHECK_SECCOMP_BASELINE,
    seccomp_forbidden,
    seccomp_setters,
    seccomp_type,
)
from .checks import (
    ALLOWED,
    Check,
    CheckResult,
    Object,
    VersionedCheck,
    containers,
    containers_phrase,
    forbid,
    is_windows,
    join_quote,
    name_of,
    pluralize,
    sub,
    v1,
)

# The volume sources a restricted pod may use; any other is reported by its field name.
ALLOWED_VOLUME_SOURCES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                          "persistentVolumeClaim", "projected", "secret")
RESTRICTED_VOLUME_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
                             "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
                             "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
                             "scaleIO", "storageos")


def _context(obj: Object) -> Object:
    return sub(obj, "securityContext") or {}


def allow_privilege_escalation_1_8(meta: Object, spec: Object) -> CheckResult:
    # unset counts as allowed: only an explicit false passes
    bad = [name_of(c) for c in containers(spec) if _context(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return ALLOWED
    return forbid("allowPrivilegeEscalation != false",
                  f"{containers_phrase(bad)} must set securityContext.allowPrivilegeEscalation=false")


def allow_privilege_escalation_1_25(meta: Object, spec: Object) -> CheckResult:
    return ALLOWED if is_windows(spec) else allow_privilege_escalation_1_8(meta, spec)


def capabilities_restricted_1_22(meta: Object, spec: Object) -> CheckResult:
    missing_drop_all, adding, forbidden_caps = [], [], set()
    for container in containers(spec):
        caps = sub(sub(container, "securityContext"), "capabilities")
        if caps is None:
            missing_drop_all.append(name_of(container))
            continue
        if "ALL" not in (caps.get("drop") or ()):
            missing_drop_all.append(name_of(container))
        added = [str(c) for c in caps.get("add") or () if c != "NET_BIND_SERVICE"]
        if added:
            adding.append(name_of(container))
            forbidden_caps.update(added)
    details = [f'{containers_phrase(missing_drop_all)} must set securityContext.capabilities.drop=["ALL"]'
               ] if missing_drop_all else []
    if adding:
        details.append(f"{containers_phrase(adding)} must not include {join_quote(sorted(forbidden_caps))} "
                       f"in securityContext.capabilities.add")
    return forbid("unrestricted capabilities", "; ".join(details)) if details else ALLOWED


def capabilities_restricted_1_25(meta: Object, spec: Object) -> CheckResult:
    return ALLOWED if is_windows(spec) else capabilities_restricted_1_22(meta, spec)


def _volume_type(volume: Object) -> str:
    return next((key for key in RESTRICTED_VOLUME_SOURCES if volume.get(key) is not None), "unknown")


def restricted_volumes_1_0(meta: Object, spec: Object) -> CheckResult:
    bad_volumes, types = [], set()
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict) or any(volume.get(key) is not None for key in ALLOWED_VOLUME_SOURCES):
            continue
        bad_volumes.append(str(volume.get("name") or ""))
        types.add(_volume_type(volume))
    if not bad_volumes:
        return ALLOWED
    count = len(bad_volumes)
    return forbid("restricted volume types",
                  f"{pluralize('volume', 'volumes', count)} {join_quote(bad_volumes)} "
                  f"{pluralize('uses', 'use', count)} "
                  f"{pluralize('restricted volume type', 'restricted volume types', len(types))} "
                  f"{join_quote(sorted(types))}")


def run_as_non_root_1_0(meta: Object, spec: Object) -> CheckResult:
    pod_value = _context(spec).get("runAsNonRoot")
    setters = ["pod"] if pod_value is False else []
    explicit, implicit = [], []
    for container in containers(spec):
        value = _context(container).get("runAsNonRoot")
        if value is False:
            explicit.append(name_of(container))
        elif value is None and pod_value is not True:
            implicit.append(name_of(container))  # nothing makes it run as non-root
    if explicit:
        setters.append(containers_phrase(explicit))
    if setters:
        return forbid("runAsNonRoot != true",
                      f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false")
    if implicit:
        return forbid("runAsNonRoot != true",
                      f"pod or {containers_phrase(implicit)} must set securityContext.runAsNonRoot=true")
    return ALLOWED


def _root(obj: Object) -> bool:
    user = _context(obj).get("runAsUser")
    return user is not None and not isinstance(user, bool) and user == 0


def run_as_user_1_23(meta: Object, spec: Object) -> CheckResult:
    setters = ["pod"] if _root(spec) else []
    explicit = [name_of(c) for c in containers(spec) if _root(c)]
    if explicit:
        setters.append(containers_phrase(explicit))
    return forbid("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else ALLOWED


def seccomp_profile_restricted_1_19(meta: Object, spec: Object) -> CheckResult:
    setters, values = seccomp_setters(spec)
    if setters:
        return seccomp_forbidden(setters, values)
    pod_set, _ = seccomp_type(spec)  # a valid pod-level profile covers containers that set none
    implicit = [name_of(c) for c in containers(spec) if not seccomp_type(c)[0] and not pod_set]
    if implicit:
        return forbid("seccompProfile", f"pod or {containers_phrase(implicit)} must set "
                                        f'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')
    return ALLOWED


def seccomp_profile_restricted_1_25(meta: Object, spec: Object) -> CheckResult:
    return ALLOWED if is_windows(spec) else seccomp_profile_restricted_1_19(meta, spec)


def _check(check_id: str, *versions: VersionedCheck) -> Check:
    return Check(check_id, RESTRICTED, versions)


RESTRICTED_CHECKS = (
    _check("allowPrivilegeEscalation", VersionedCheck(v1(8), allow_privilege_escalation_1_8),
           VersionedCheck(v1(25), allow_privilege_escalation_1_25)),
    _check("capabilities_restricted",
           VersionedCheck(v1(22), capabilities_restricted_1_22, (CHECK_CAPABILITIES_BASELINE,)),
           VersionedCheck(v1(25), capabilities_restricted_1_25, (CHECK_CAPABILITIES_BASELINE,))),
    _check("restrictedVolumes", VersionedCheck(v1(0), restricted_volumes_1_0, (CHECK_HOST_PATH_VOLUMES,))),
    _check("runAsNonRoot", VersionedCheck(v1(0), run_as_non_root_1_0)),
    _check("runAsUser", VersionedCheck(v1(23), run_as_user_1_23)),
    _check("seccompProfile_restricted",
           VersionedCheck(v1(19), seccomp_profile_restricted_1_19, (CHECK_SECCOMP_BASELINE,)),
           VersionedCheck(v1(25), seccomp_profile_restricted_1_25, (CHECK_SECCOMP_BASELINE,))),
)
