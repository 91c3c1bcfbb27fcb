"""The linked Service fields clusterIP, clusterIPs, ipFamilies and ipFamilyPolicy
(ValidateServiceClusterIPsRelatedFields, validateUpgradeDowngradeClusterIPs/IPFamilies in
pkg/apis/core/validation)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path

Object = dict[str, Any]
NONE = "None"
FAMILIES = ("IPv4", "IPv6")
POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
SPEC = Path("spec")
CLUSTER_IPS = SPEC.child("clusterIPs")
FAMILIES_PATH = SPEC.child("ipFamilies")
POLICY_PATH = SPEC.child("ipFamilyPolicy")
CHANGED = "may not change once set"


def spec_of(svc: Object) -> Object:
    spec = svc.get("spec")
    return spec if isinstance(spec, dict) else {}


def cluster_ips(svc: Object) -> list[str]:
    return list(spec_of(svc).get("clusterIPs") or [])


def families(svc: Object) -> list[str]:
    return list(spec_of(svc).get("ipFamilies") or [])


def is_headless(svc: Object) -> bool:
    ips = cluster_ips(svc)
    return len(ips) == 1 and ips[0] == NONE


def _sync_errors(spec: Object, ips: list[str]) -> ErrorList:
    if spec.get("clusterIP"):
        if not ips:
            return [field.required(CLUSTER_IPS, "")]
        if ips[0] != spec["clusterIP"]:
            return [field.invalid(CLUSTER_IPS, ips, "first value must match `clusterIP`")]
    elif ips:
        return [field.invalid(CLUSTER_IPS, ips, "must be empty when `clusterIP` is not specified")]
    return []


def _family_errors(spec: Object) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in FAMILIES:
            errs.append(field.not_supported(FAMILIES_PATH.index(i), family, FAMILIES))
        if family in seen:
            errs.append(field.duplicate(FAMILIES_PATH.index(i), family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in POLICIES:
        errs.append(field.not_supported(POLICY_PATH, policy, POLICIES))
    return errs


def _ip_errors(ips: list[str]) -> ErrorList:
    errs: ErrorList = []
    for i, ip in enumerate(ips):
        if i == 0 and ip == NONE:
            if len(ips) > 1:
                errs.append(field.invalid(CLUSTER_IPS, ips, "'None' must be the first and only value"))
            continue
        errs += validation.is_valid_ip(CLUSTER_IPS.index(i), ip)
    return errs


def _matching_families(svc: Object, ips: list[str]) -> ErrorList:
    errs: ErrorList = []
    declared = families(svc)
    for i, ip in enumerate(ips[:len(declared)]):
        actual = validation.ip_family_of(ip)
        if declared[i] in FAMILIES and actual != declared[i]:
            errs.append(field.invalid(CLUSTER_IPS.index(i), ip,
                                      f"expected an {declared[i]} value as indicated by `ipFamilies[{i}]`"))
    return errs


def validate_cluster_ips_related_fields(svc: Object) -> ErrorList:
    """ValidateServiceClusterIPsRelatedFields (nothing for ExternalName: checked before, all unset)."""
    spec = spec_of(svc)
    if spec.get("type") == "ExternalName":
        return []
    ips = cluster_ips(svc)
    errs = _sync_errors(spec, ips) + _family_errors(spec)
    ip_errs = _ip_errors(ips)
    errs += ip_errs
    if len(ips) > 2:
        errs.append(field.invalid(CLUSTER_IPS, ips, "may only hold up to 2 values"))
    if ip_errs:
        return errs
    if len(ips) > 1 and {validation.ip_family_of(ip) for ip in ips} != set(FAMILIES):
        errs.append(field.invalid(CLUSTER_IPS, ips, "may specify no more than one IP for each IP family"))
    if not is_headless(svc) and ips:
        errs += _matching_families(svc, ips)
    return errs


def _external_name(svc: Object, old: Object) -> bool:
    return "ExternalName" in (spec_of(svc).get("type"), spec_of(old).get("type"))


def validate_cluster_ips_update(svc: Object, old: Object) -> ErrorList:
    """validateUpgradeDowngradeClusterIPs: the primary clusterIP never changes; a released secondary one
    needs ipFamilyPolicy SingleStack."""
    if _external_name(svc, old) or (is_headless(svc) and is_headless(old)):
        return []
    new_ips, old_ips = cluster_ips(svc), cluster_ips(old)
    if len(new_ips) == len(old_ips):
        return [field.invalid(CLUSTER_IPS.index(i), new_ips, CHANGED)
                for i, ip in enumerate(old_ips) if ip != new_ips[i]]
    errs: ErrorList = []
    if len(old_ips) > len(new_ips):
        if not new_ips:
            errs.append(field.invalid(CLUSTER_IPS.index(0), new_ips, "primary clusterIP can not be unset"))
        elif old_ips and new_ips[0] != old_ips[0]:
            errs.append(field.invalid(CLUSTER_IPS.index(0), new_ips, CHANGED))
        if len(new_ips) == 1 and spec_of(svc).get("ipFamilyPolicy") != "SingleStack":
            errs.append(field.invalid(POLICY_PATH, spec_of(svc).get("ipFamilyPolicy"),
                                      "must be set to 'SingleStack' when releasing the secondary clusterIP"))
    elif old_ips and new_ips[0] != old_ips[0]:
        errs.append(field.invalid(CLUSTER_IPS.index(0), new_ips, CHANGED))
    return errs


def validate_families_update(svc: Object, old: Object) -> ErrorList:
    """validateUpgradeDowngradeIPFamilies: the primary family never changes (headless ones may)."""
    if _external_name(svc, old) or is_headless(svc) != is_headless(old) or is_headless(svc):
        return []
    new, prev = families(svc), families(old)
    if len(new) == len(prev):
        return [field.invalid(FAMILIES_PATH.index(0), new, CHANGED) for i, f in enumerate(prev) if f != new[i]]
    errs: ErrorList = []
    if len(prev) > len(new):
        if not cluster_ips(svc):
            errs.append(field.invalid(FAMILIES_PATH.index(0), new, "primary ipFamily can not be unset"))
        if new and new[0] != prev[0]:
            errs.append(field.invalid(FAMILIES_PATH.index(0), cluster_ips(svc), CHANGED))
        if len(new) == 1 and spec_of(svc).get("ipFamilyPolicy") != "SingleStack":
            errs.append(field.invalid(POLICY_PATH, spec_of(svc).get("ipFamilyPolicy"),
                                      "must be set to 'SingleStack' when releasing the secondary ipFamily"))
    elif prev and new and new[0] != prev[0]:
        errs.append(field.invalid(FAMILIES_PATH.index(0), cluster_ips(svc), CHANGED))
    return errs
