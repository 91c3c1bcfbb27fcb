"""Defaulting ipFamilyPolicy and ipFamilies against the cluster's configuration, before any IP is
allocated (Allocators.initIPFamilyFields in pkg/registry/core/service/storage/alloc.go)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import errors, field, validation
from ....apimachinery.field import ErrorList
from .clusterips import (
    CLUSTER_IPS,
    FAMILIES_PATH,
    NONE,
    POLICY_PATH,
    cluster_ips,
    families,
    spec_of,
    validate_cluster_ips_related_fields,
)
from .network import ServiceNetwork

Object = dict[str, Any]
DUAL_STACK_POLICIES = ("PreferDualStack", "RequireDualStack")


def invalid(svc: Object, errs: ErrorList) -> errors.StatusError:
    return errors.invalid("Service", "", (svc.get("metadata") or {}).get("name", ""), errs)


def _other(family: str) -> str:
    return "IPv6" if family == "IPv4" else "IPv4"


def matching_prefer_dual_stack(svc: Object, old: Object | None) -> bool:
    """isMatchingPreferDualStackClusterIPFields: an unchanged PreferDualStack service keeps its IPs."""
    if old is None:
        return False
    spec, prev = spec_of(svc), spec_of(old)
    if spec.get("type") != prev.get("type") or spec.get("type") not in ("ClusterIP", "NodePort", "LoadBalancer"):
        return False
    if spec.get("ipFamilyPolicy") != "PreferDualStack" or prev.get("ipFamilyPolicy") != "PreferDualStack":
        return False
    return spec.get("clusterIP") == prev.get("clusterIP") and cluster_ips(svc) == cluster_ips(old) and \
        families(svc) == families(old)


def _default_policy(spec: Object, old: Object | None) -> None:
    if spec.get("ipFamilyPolicy") is not None:
        return
    if old is not None and spec_of(old).get("ipFamilyPolicy") is not None:
        spec["ipFamilyPolicy"] = spec_of(old)["ipFamilyPolicy"]
    elif spec.get("clusterIP") == NONE and not spec.get("selector"):
        spec["ipFamilyPolicy"] = "RequireDualStack"
    else:
        spec["ipFamilyPolicy"] = "SingleStack"


def _update_errors(svc: Object, old: Object) -> ErrorList:
    spec = spec_of(svc)
    policy = spec.get("ipFamilyPolicy")
    if policy == "SingleStack":
        if spec.get("clusterIP") == spec_of(old).get("clusterIP") and cluster_ips(svc) == cluster_ips(old) and \
                len(cluster_ips(svc)) > 1:
            spec["clusterIPs"] = cluster_ips(svc)[:1]
        if families(svc) == families(old) and len(families(svc)) > 1:
            spec["ipFamilies"] = families(svc)[:1]
        return []
    errs: ErrorList = []
    if 0 < len(cluster_ips(svc)) < len(cluster_ips(old)):
        errs.append(field.invalid(POLICY_PATH, policy, "must be 'SingleStack' to release the secondary cluster IP"))
    if 0 < len(families(svc)) < len(families(old)):
        errs.append(field.invalid(POLICY_PATH, policy, "must be 'SingleStack' to release the secondary IP family"))
    return errs


def _policy_errors(spec: Object) -> ErrorList:
    if spec.get("ipFamilyPolicy") != "SingleStack":
        return []
    errs: ErrorList = []
    if len(spec.get("clusterIPs") or []) == 2:
        errs.append(field.invalid(POLICY_PATH, "SingleStack", "must be 'RequireDualStack' or 'PreferDualStack' "
                                                              "when multiple cluster IPs are specified"))
    if len(spec.get("ipFamilies") or []) == 2:
        errs.append(field.invalid(POLICY_PATH, "SingleStack", "must be 'RequireDualStack' or 'PreferDualStack' "
                                                              "when multiple IP families are specified"))
    return errs


def _infer_families(spec: Object, network: ServiceNetwork) -> ErrorList:
    """ipFamilies from the requested clusterIPs."""
    errs: ErrorList = []
    declared = list(spec.get("ipFamilies") or [])
    for i, ip in enumerate(spec.get("clusterIPs") or []):
        if ip == NONE:
            break
        family = validation.ip_family_of(ip)
        if i < len(declared):
            continue
        if family not in network.families:
            errs.append(field.invalid(CLUSTER_IPS.index(i), spec["clusterIPs"],
                                      f"{family} is not configured on this cluster"))
        else:
            declared.append(family)
    if declared:
        spec["ipFamilies"] = declared
    return errs


def _headless_selectorless(spec: Object, network: ServiceNetwork) -> None:
    spec["ipFamilies"] = spec.get("ipFamilies") or [network.family]
    if len(spec["ipFamilies"]) < 2 and spec["ipFamilyPolicy"] != "SingleStack":
        spec["ipFamilies"].append(_other(spec["ipFamilies"][0]))


def _configured_errors(spec: Object, network: ServiceNetwork) -> ErrorList:
    errs: ErrorList = []
    if spec["ipFamilyPolicy"] == "RequireDualStack" and len(network.families) < 2:
        errs.append(field.invalid(POLICY_PATH, spec["ipFamilyPolicy"],
                                  "this cluster is not configured for dual-stack services"))
    for i, family in enumerate(spec.get("ipFamilies") or []):
        if family not in network.families:
            errs.append(field.invalid(FAMILIES_PATH.index(i), family, "not configured on this cluster"))
    return errs


def init_ip_family_fields(svc: Object, old: Object | None, network: ServiceNetwork) -> None:
    """Raises 422 for families, policies or IPs this cluster cannot serve."""
    spec = spec_of(svc)
    if spec.get("type") == "ExternalName" or matching_prefer_dual_stack(svc, old):
        return
    _default_policy(spec, old)
    errs = validate_cluster_ips_related_fields(svc)
    if errs:
        raise invalid(svc, errs)
    errs = (_update_errors(svc, old) if old is not None else []) + _policy_errors(spec)
    errs += _infer_families(spec, network)
    if errs:
        raise invalid(svc, errs)
    if spec.get("clusterIP") == NONE and not spec.get("selector"):
        _headless_selectorless(spec, network)
        return
    errs = _configured_errors(spec, network)
    if errs:
        raise invalid(svc, errs)
    spec["ipFamilies"] = spec.get("ipFamilies") or [network.family]
    if spec["ipFamilyPolicy"] != "SingleStack" and len(spec["ipFamilies"]) == 1 and len(network.families) == 2:
        spec["ipFamilies"].append(_other(spec["ipFamilies"][0]))
