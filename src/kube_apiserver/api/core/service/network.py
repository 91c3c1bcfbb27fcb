"""What Service allocation is configured with: the cluster IP range (--service-cluster-ip-range, its
primary range) and the node port range (--service-node-port-range)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ....cli.portrange import PortRange

DEFAULT_CIDR = "10.0.0.0/24"
DEFAULT_NODE_PORTS = PortRange(30000, 2768)


def family_of_network(cidr: str) -> str:
    return "IPv6" if ipaddress.ip_network(cidr, strict=False).version == 6 else "IPv4"


@dataclass(frozen=True)
class ServiceNetwork:
    cidr: str = DEFAULT_CIDR
    node_ports: PortRange = field(default=DEFAULT_NODE_PORTS)

    @property
    def family(self) -> str:
        """The cluster's default IP family: that of the primary range."""
        return family_of_network(self.cidr)

    @property
    def families(self) -> tuple[str, ...]:
        """The families this cluster allocates from (one range: single-stack)."""
        return (self.family,)
