"""EndpointSlice validation (pkg/apis/discovery/validation, v1.34), with the IP checks it borrows from
pkg/apis/core/validation (ValidateEndpointIP) and the warnings of the registry strategy."""

from __future__ import annotations

import ipaddress
from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path, go_quote

Object = dict[str, Any]
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_TOPOLOGY_LABELS, MAX_ADDRESSES, MAX_PORTS, MAX_ENDPOINTS, MAX_HINTS = 16, 100, 20000, 1000, 8
ZONE_LABEL = "topology.kubernetes.io/zone"


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _is_v4(ip: validation.IPAddress) -> bool:
    return isinstance(ip, ipaddress.IPv4Address) or ip.ipv4_mapped is not None


def _link_local_multicast(ip: validation.IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.IPv4Network("224.0.0.0/24")
    return ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02


def validate_endpoint_ip(address: str, path: Path) -> ErrorList:
    """ValidateEndpointIP: no unspecified, loopback or link-local addresses."""
    ip = validation.parse_ip_sloppy(address)
    if ip is None:
        return [field.invalid(path, address, "must be a valid IP address")]
    plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
    errs: ErrorList = []
    if plain.is_unspecified:
        errs.append(field.invalid(path, address, f"may not be unspecified ({address})"))
    if plain.is_loopback:
        errs.append(field.invalid(path, address, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if plain.is_link_local:
        errs.append(field.invalid(path, address, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if _link_local_multicast(ip):
        errs.append(field.invalid(path, address,
                                  "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
    return errs


def validate_address(address: str, address_type: str, path: Path) -> ErrorList:
    """Known address types only; the IP forms are checked as a legacy (non-strict) IP field."""
    if address_type == "FQDN":
        return validation.is_fully_qualified_domain_name(path, address)
    if address_type not in ("IPv4", "IPv6"):
        return []
    errs = validation.is_valid_ip_for_legacy_field(path, address, strict=False)
    if errs:
        return errs
    ip = validation.parse_ip_sloppy(address)
    if ip is not None and _is_v4(ip) != (address_type == "IPv4"):
        errs.append(field.invalid(path, address, f"must be an {address_type} address"))
    return errs + validate_endpoint_ip(address, path)


def _validate_names(items: list[Any], path: Path, check: Any) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        item_name = _dict(item).get("name") or ""
        name_path = path.index(i).child("name")
        if item_name in seen:
            errs.append(field.duplicate(name_path, item_name))
        seen.add(item_name)
        errs += [field.invalid(name_path, item_name, m) for m in check(item_name)]
    return errs


def validate_hints(hints: Object, path: Path) -> ErrorList:
    zones = list(hints.get("forZones") or [])
    if len(zones) > MAX_HINTS:
        return [field.too_many(path.child("forZones"), len(zones), MAX_HINTS)]
    errs = _validate_names(zones, path.child("forZones"), validation.is_valid_label_value)
    nodes = list(hints.get("forNodes") or [])
    if len(nodes) > MAX_HINTS:
        return errs + [field.too_many(path.child("forNodes"), len(nodes), MAX_HINTS)]
    return errs + _validate_names(nodes, path.child("forNodes"),
                                  lambda n: validation.name_is_dns_subdomain(n, False))


def _validate_addresses(endpoint: Object, address_type: str, path: Path) -> ErrorList:
    addresses = list(endpoint.get("addresses") or [])
    errs: ErrorList = []
    if not addresses:
        errs.append(field.required(path, "must contain at least 1 address"))
    elif len(addresses) > MAX_ADDRESSES:
        errs.append(field.too_many(path, len(addresses), MAX_ADDRESSES))
    for i, address in enumerate(addresses):
        errs += validate_address(str(address), address_type, path.index(i))
    return errs


def validate_endpoint(endpoint: Object, address_type: str, path: Path) -> ErrorList:
    errs = _validate_addresses(endpoint, address_type, path.child("addresses"))
    if endpoint.get("nodeName") is not None:
        node = endpoint["nodeName"]
        errs += [field.invalid(path.child("nodeName"), node, m) for m in validation.name_is_dns_subdomain(node, False)]
    topology = endpoint.get("deprecatedTopology") or {}
    topology_path = path.child("deprecatedTopology")
    if len(topology) > MAX_TOPOLOGY_LABELS:
        errs.append(field.too_many(topology_path, len(topology), MAX_TOPOLOGY_LABELS))
    errs += validation.validate_labels(topology, topology_path)
    if ZONE_LABEL in topology:
        errs.append(field.internal(topology_path.key(ZONE_LABEL), "reserved key was not removed in conversion"))
    if endpoint.get("hostname") is not None:
        hostname = endpoint["hostname"]
        errs += [field.invalid(path.child("hostname"), hostname, m) for m in validation.is_dns1123_label(hostname)]
    if isinstance(endpoint.get("hints"), dict):
        errs += validate_hints(endpoint["hints"], path.child("hints"))
    return errs


def validate_endpoints(endpoints: list[Any], address_type: str, path: Path) -> ErrorList:
    if len(endpoints) > MAX_ENDPOINTS:
        return [field.too_many(path, len(endpoints), MAX_ENDPOINTS)]
    return [e for i, ep in enumerate(endpoints) for e in validate_endpoint(_dict(ep), address_type, path.index(i))]


def validate_port(port: Object, path: Path, seen: set[str]) -> ErrorList:
    errs: ErrorList = []
    port_name = port.get("name") or ""
    if port_name:
        errs += [field.invalid(path.child("name"), port_name, m) for m in validation.is_dns1123_label(port_name)]
    if port_name in seen:
        errs.append(field.duplicate(path.child("name"), port_name))
    seen.add(port_name)
    protocol = port.get("protocol")
    if protocol is None:
        errs.append(field.required(path.child("protocol"), ""))
    elif protocol not in PROTOCOLS:
        errs.append(field.not_supported(path.child("protocol"), protocol, PROTOCOLS))
    if port.get("appProtocol") is not None:
        app = port["appProtocol"]
        errs += [field.invalid(path.child("appProtocol"), app, m).with_origin("format=qualified-name")
                 for m in validation.is_qualified_name(app)]
    return errs


def validate_ports(ports: list[Any], path: Path) -> ErrorList:
    if len(ports) > MAX_PORTS:
        return [field.too_many(path, len(ports), MAX_PORTS)]
    seen: set[str] = set()
    return [e for i, port in enumerate(ports) for e in validate_port(_dict(port), path.index(i), seen)]


def validate_address_type(address_type: str) -> ErrorList:
    if not address_type:
        return [field.required(Path("addressType"), "")]
    if address_type not in ADDRESS_TYPES:
        return [field.not_supported(Path("addressType"), address_type, ADDRESS_TYPES)]
    return []


def validate_endpoint_slice(obj: Object) -> ErrorList:
    address_type = obj.get("addressType") or ""
    return (validate_address_type(address_type)
            + validate_endpoints(list(obj.get("endpoints") or []), address_type, Path("endpoints"))
            + validate_ports(list(obj.get("ports") or []), Path("ports")))


def ip_warnings(path: Path, value: str) -> list[str]:
    """GetWarningsForIP: non-standard (leading zeros, IPv4-mapped) or non-canonical IPv6 forms."""
    ip = validation.parse_ip_sloppy(value)
    if ip is None:
        return []
    try:
        addr: validation.IPAddress | None = ipaddress.ip_address(value)
    except ValueError:
        addr = None
    if addr is None or (isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None):
        return [f"{path}: non-standard IP address {go_quote(value)} will be considered invalid in a future "
                f"Kubernetes release: use {go_quote(validation.go_ip_string(ip))}"]
    if isinstance(addr, ipaddress.IPv6Address) and str(addr) != value:
        return [f"{path}: IPv6 address {go_quote(value)} should be in RFC 5952 canonical format "
                f"({go_quote(str(addr))})"]
    return []
