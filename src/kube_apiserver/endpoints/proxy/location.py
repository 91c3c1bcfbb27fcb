"""Where a connect subresource proxies to (the url.URL a rest.Redirector's ResourceLocation returns), and the
Go path and id helpers those locations are built with (path.Join, JoinPreservingTrailingSlash,
SplitSchemeNamePort)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, replace

SCHEMES = ("", "http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


class PortError(Exception):
    """A location's port cannot be dialled; str() is Go's dial error."""


@dataclass(frozen=True)
class Location:
    scheme: str  # "" is http (normalizeLocation)
    host: str  # an IP address or a host name, without brackets
    port: str = ""  # a number or a service name, as in a URL's host; "" for the scheme's port
    path: str = ""

    @property
    def effective_scheme(self) -> str:
        return self.scheme or "http"

    def dial_port(self) -> int:
        """The port a dial uses: the scheme's without one; a name is looked up as Go's dialer does."""
        if not self.port:
            return DEFAULT_PORTS[self.effective_scheme]
        if self.port.isdigit():
            if int(self.port) > 65535:
                raise PortError(f"dial tcp: address {self.port}: invalid port")
            return int(self.port)
        try:
            return socket.getservbyname(self.port, "tcp")
        except OSError:
            raise PortError(f"dial tcp: address tcp/{self.port}: unknown port") from None

    @property
    def bracketed_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    def with_path(self, path: str) -> Location:
        return replace(self, path=path)


def split_scheme_name_port(id_: str) -> tuple[str, str, str] | None:
    """utilnet.SplitSchemeNamePort: name, name:port or scheme:name:port; None when invalid."""
    parts = id_.split(":")
    if len(parts) > 3:
        return None
    scheme = parts[0] if len(parts) == 3 else ""
    name = parts[1] if len(parts) == 3 else parts[0]
    port = parts[-1] if len(parts) > 1 else ""
    return (scheme, name, port) if name and scheme in SCHEMES else None


def clean_path(path: str) -> str:
    """path.Clean."""
    if not path:
        return "."
    rooted = path.startswith("/")
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(segment)
    joined = "/".join(parts)
    if rooted:
        return "/" + joined
    return joined or "."


def join_path(*elements: str) -> str:
    """path.Join: the non-empty elements joined and cleaned; "" when all are empty."""
    given = [e for e in elements if e]
    return clean_path("/".join(given)) if given else ""


def join_preserving_trailing_slash(*elements: str) -> str:
    """utilnet.JoinPreservingTrailingSlash: path.Join, keeping the last non-empty element's trailing slash."""
    result = join_path(*elements)
    last = next((e for e in reversed(elements) if e), "")
    if last.endswith("/") and not result.endswith("/"):
        result += "/"
    return result


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP address, an IPv4-mapped IPv6 one as the IPv4 address it maps (as Go's net.IP holds it)."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_global_unicast(text: str) -> bool:
    """net.IP.IsGlobalUnicast of a parsed address (private ranges included, as in Go)."""
    ip = parse_ip(text)
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv4Address) and ip == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (ip.is_unspecified or ip.is_loopback or ip.is_multicast or ip.is_link_local)
