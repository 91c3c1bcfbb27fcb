"""--service-cluster-ip-range parsing and the API server's own service IP (kube-apiserver's
getServiceIPAndRanges and controlplane.ServiceIPRange)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from kube_apiserver import logs

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_SERVICE_IP_CIDR = "10.0.0.0/24"
MIN_SERVICE_RANGE_SIZE = 8


@dataclass
class ServiceIPRanges:
    cidrs: list[IPNetwork] = field(default_factory=list)
    entries: int = 0  # how many comma-separated entries the flag had
    api_server_service_ip: str | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def primary(self) -> IPNetwork | None:
        return self.cidrs[0] if self.cidrs else None

    @property
    def secondary(self) -> IPNetwork | None:
        return self.cidrs[1] if len(self.cidrs) > 1 else None


def _parse_cidr(text: str, index: int) -> IPNetwork:
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise ValueError(f"service-cluster-ip-range[{index}] is not a valid cidr") from None


def first_usable_ip(cidr: IPNetwork) -> str:
    """netutils.GetIndexedIP(cidr, 1): the address after the network address."""
    return str(cidr.network_address + 1)


def service_ip_ranges(flag_value: str) -> ServiceIPRanges:
    """Parses the flag (default 10.0.0.0/24, with kube-apiserver's deprecation warning)."""
    entries = flag_value.split(",") if flag_value else []
    if not entries:
        logs.warning(
            "No CIDR for service cluster IPs specified. Default value which was %s is deprecated and will be "
            "removed in future releases. Please specify it using --service-cluster-ip-range on kube-apiserver.",
            DEFAULT_SERVICE_IP_CIDR,
        )
        entries_to_parse = [DEFAULT_SERVICE_IP_CIDR]
    else:
        entries_to_parse = entries[:2]  # validation reports more than two entries
    result = ServiceIPRanges(entries=len(entries))
    try:
        result.cidrs = [_parse_cidr(text, i) for i, text in enumerate(entries_to_parse)]
    except ValueError as err:
        result.errors.append(str(err))
        return result
    _set_service_ip(result)
    return result


def _set_service_ip(result: ServiceIPRanges) -> None:
    primary = result.cidrs[0]
    if min(primary.num_addresses, 1 << 16) < MIN_SERVICE_RANGE_SIZE:
        result.errors.append(
            f"the service cluster IP range must be at least {MIN_SERVICE_RANGE_SIZE} IP addresses"
        )
        return
    result.api_server_service_ip = first_usable_ip(primary)
    logs.info_v(4, 'Setting service IP to "%s" (read-write).', result.api_server_service_ip)
