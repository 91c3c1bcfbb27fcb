"""ValidateEndpoints (pkg/apis/core/validation, v1.34): subsets with addresses, valid non-special IPs,
ports named when there are several."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path

Object = dict[str, Any]
PROTOCOLS = ("SCTP", "TCP", "UDP")


def _dicts(value: Any) -> list[Object]:
    return [item if isinstance(item, dict) else {} for item in value or []]


def validate_address(address: Object, path: Path) -> ErrorList:
    """validateEndpointAddress."""
    ip = address.get("ip") or ""
    errs = validation.is_valid_ip(path.child("ip"), ip)
    hostname = address.get("hostname") or ""
    if hostname:
        errs += [field.invalid(path.child("hostname"), hostname, m).with_origin("format=dns-label")
                 for m in validation.is_dns1123_label(hostname)]
    node = address.get("nodeName")
    if node is not None:
        errs += [field.invalid(path.child("nodeName"), node, m).with_origin("format=dns-label")
                 for m in validation.name_is_dns_subdomain(node, False)]
    return errs + validation.validate_non_special_ip(path.child("ip"), ip)


def validate_port(port: Object, require_name: bool, path: Path) -> ErrorList:
    """validateEndpointPort."""
    errs: ErrorList = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(field.required(path.child("name"), ""))
    elif name:
        errs += [field.invalid(path.child("name"), name, m).with_origin("format=dns-label")
                 for m in validation.is_dns1123_label(name)]
    number = port.get("port") or 0
    errs += [field.invalid(path.child("port"), number, m).with_origin("portNum")
             for m in validation.is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(field.required(path.child("protocol"), ""))
    elif protocol not in PROTOCOLS:
        errs.append(field.not_supported(path.child("protocol"), protocol, PROTOCOLS))
    if port.get("appProtocol") is not None:
        errs += [field.invalid(path.child("appProtocol"), port["appProtocol"], m)
                 for m in validation.is_qualified_name(port["appProtocol"])]
    return errs


def validate_subsets(subsets: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, subset in enumerate(_dicts(subsets)):
        at = path.index(i)
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            errs.append(field.required(at, "must specify `addresses` or `notReadyAddresses`"))
        for key in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(_dicts(subset.get(key))):
                errs += validate_address(address, at.child(key).index(j))
        ports = _dicts(subset.get("ports"))
        for j, port in enumerate(ports):
            errs += validate_port(port, len(ports) > 1, at.child("ports").index(j))
    return errs


def validate_endpoints(obj: Object) -> ErrorList:
    errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           Path("metadata"))
    return errs + validate_subsets(obj.get("subsets"), Path("subsets"))
