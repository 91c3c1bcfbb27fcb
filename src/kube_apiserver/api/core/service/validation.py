"""ValidateService and ValidateServiceUpdate (pkg/apis/core/validation, v1.34)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, OrderedStruct, Path
from ..podspec.probes import validate_port_num_or_name
from .clusterips import (
    is_headless,
    spec_of,
    validate_cluster_ips_related_fields,
    validate_cluster_ips_update,
    validate_families_update,
)
from .traffic import (
    validate_affinity,
    validate_external_traffic_policy,
    validate_internal_traffic_policy,
    validate_load_balancer_class,
    validate_source_ranges,
    validate_traffic_distribution,
)
from .types import TYPES, needs_health_check

Object = dict[str, Any]
SPEC = Path("spec")
PORTS = SPEC.child("ports")
PROTOCOLS = ("SCTP", "TCP", "UDP")
HINTS_ANNOTATION = "service.kubernetes.io/topology-aware-hints"
MODE_ANNOTATION = "service.kubernetes.io/topology-mode"


def _topology_annotations(meta: Object) -> ErrorList:
    annotations = meta.get("annotations") or {}
    if MODE_ANNOTATION in annotations and HINTS_ANNOTATION in annotations and \
            annotations[MODE_ANNOTATION] != annotations[HINTS_ANNOTATION]:
        path = Path("metadata", "annotations").key(MODE_ANNOTATION)
        return [field.invalid(path, annotations[MODE_ANNOTATION],
                              f"must match annotations[{HINTS_ANNOTATION}] when both are specified")]
    return []


def _type_rules(svc: Object) -> ErrorList:
    spec = spec_of(svc)
    kind = spec.get("type")
    if kind in ("LoadBalancer", "NodePort"):
        if is_headless(svc):
            return [field.invalid(SPEC.child("clusterIPs").index(0), "None",
                                  f"may not be set to 'None' for {kind} services")]
        return []
    if kind != "ExternalName":
        return []
    errs = [field.forbidden(SPEC.child(key), "may not be set for ExternalName services")
            for key in ("clusterIPs", "ipFamilies") if spec.get(key)]
    if spec.get("ipFamilyPolicy") is not None:
        errs.append(field.forbidden(SPEC.child("ipFamilyPolicy"), "may not be set for ExternalName services"))
    cname = (spec.get("externalName") or "").removesuffix(".")
    if not cname:
        return errs + [field.required(SPEC.child("externalName"), "")]
    return errs + [field.invalid(SPEC.child("externalName"), cname, msg) for msg in validation.is_dns1123_subdomain(cname)]


def validate_service_port(port: Object, require_name: bool, names: set[str], path: Path) -> ErrorList:
    """validateServicePort."""
    errs: ErrorList = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(field.required(path.child("name"), ""))
    elif name:
        errs += [field.invalid(path.child("name"), name, msg) for msg in validation.is_dns1123_label(name)]
        if name in names:
            errs.append(field.duplicate(path.child("name"), name))
        names.add(name)
    number = port.get("port") or 0
    errs += [field.invalid(path.child("port"), number, msg) for msg in validation.is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(field.required(path.child("protocol"), ""))
    elif protocol not in PROTOCOLS:
        errs.append(field.not_supported(path.child("protocol"), protocol, PROTOCOLS))
    errs += validate_port_num_or_name(port.get("targetPort", 0), path.child("targetPort"))
    if port.get("appProtocol") is not None:
        errs += [field.invalid(path.child("appProtocol"), port["appProtocol"], msg)
                 for msg in validation.is_qualified_name(port["appProtocol"])]
    return errs


def _port_key(port: Object) -> OrderedStruct:
    """The internal core.ServicePort{Protocol, Port} a duplicate is reported as."""
    return OrderedStruct((("Name", ""), ("Protocol", port.get("protocol") or ""), ("AppProtocol", None),
                          ("Port", port.get("port") or 0), ("TargetPort", 0), ("NodePort", 0)))


def _ports(svc: Object) -> ErrorList:
    ports = [p if isinstance(p, dict) else {} for p in spec_of(svc).get("ports") or []]
    errs: ErrorList = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += validate_service_port(port, len(ports) > 1, names, PORTS.index(i))
    return errs


def _external_ips(spec: Object) -> ErrorList:
    errs: ErrorList = []
    for i, ip in enumerate(spec.get("externalIPs") or []):
        path = SPEC.child("externalIPs").index(i)
        ip_errs = validation.is_valid_ip(path, ip)
        errs += ip_errs or validation.validate_non_special_ip(path, ip)
    return errs


def _type(spec: Object) -> ErrorList:
    kind = spec.get("type") or ""
    if not kind:
        return [field.required(SPEC.child("type"), "")]
    if kind not in TYPES:
        return [field.not_supported(SPEC.child("type"), kind, TYPES)]
    return []


def _port_uniqueness(spec: Object) -> ErrorList:
    ports = [p if isinstance(p, dict) else {} for p in spec.get("ports") or []]
    errs: ErrorList = []
    if spec.get("type") == "ClusterIP":
        errs += [field.forbidden(PORTS.index(i).child("nodePort"), "may not be used when `type` is 'ClusterIP'")
                 for i, port in enumerate(ports) if port.get("nodePort")]
    node_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        if port.get("nodePort"):
            key = (port.get("protocol") or "", port["nodePort"])
            if key in node_ports:
                errs.append(field.duplicate(PORTS.index(i).child("nodePort"), port["nodePort"]))
            node_ports.add(key)
    seen: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        key = (port.get("protocol") or "", port.get("port") or 0)
        if key in seen:
            errs.append(field.duplicate(PORTS.index(i), _port_key(port)))
        seen.add(key)
    return errs


def _load_balancer_fields(spec: Object) -> ErrorList:
    kind = spec.get("type")
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != "LoadBalancer":
        return [field.forbidden(SPEC.child("allocateLoadBalancerNodePorts"),
                                "may only be used when `type` is 'LoadBalancer'")]
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        return [field.required(Path("allocateLoadBalancerNodePorts"), "")]
    return []


def validate_service(svc: Object) -> ErrorList:
    meta = svc.get("metadata") or {}
    spec = spec_of(svc)
    errs = validation.validate_object_meta(meta, True, validation.name_is_dns1035_label, Path("metadata"))
    errs += _topology_annotations(meta)
    if not spec.get("ports") and not is_headless(svc) and spec.get("type") != "ExternalName":
        errs.append(field.required(PORTS, ""))
    errs += _type_rules(svc) + _ports(svc)
    if spec.get("selector") is not None:
        errs += validation.validate_labels(spec["selector"], SPEC.child("selector"))
    errs += validate_affinity(spec)
    errs += validate_cluster_ips_related_fields(svc)
    errs += _external_ips(spec) + _type(spec) + _port_uniqueness(spec)
    errs += validate_source_ranges(svc) + _load_balancer_fields(spec)
    errs += validate_load_balancer_class(None, svc)
    errs += validate_external_traffic_policy(svc) + validate_internal_traffic_policy(spec)
    return errs + validate_traffic_distribution(spec)


def validate_service_update(svc: Object, old: Object) -> ErrorList:
    """ValidateServiceUpdate without the ValidateService it ends with (the strategy runs that)."""
    errs = validation.validate_object_meta_update(svc.get("metadata") or {}, old.get("metadata") or {},
                                                  Path("metadata"))
    errs += validate_cluster_ips_update(svc, old) + validate_families_update(svc, old)
    errs += validate_load_balancer_class(old, svc)
    if needs_health_check(old) and needs_health_check(svc) and \
            spec_of(svc).get("healthCheckNodePort") != spec_of(old).get("healthCheckNodePort"):
        errs.append(field.forbidden(SPEC.child("healthCheckNodePort"), "field is immutable"))
    return errs
