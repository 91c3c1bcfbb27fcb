"""Kubernetes' ip and cidr libraries: ip, isIP, ip.isCanonical, family, isUnspecified, isLoopback,
isLinkLocalMulticast, isLinkLocalUnicast, isGlobalUnicast, cidr, isCIDR, containsIP, containsCIDR,
masked, prefixLength, and string() of both. Parsing is Go's netip (strict dotted quads, no zones,
no IPv4-mapped IPv6). Values are tagged with their canonical text (netip's String()), so equality is
netip's: a CIDR keeps its unmasked address (cidr('10.0.0.1/8') != cidr('10.0.0.0/8'))."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable
from typing import Any

from kube_apiserver.cel.errors import LibraryError, NoSuchOverload
from kube_apiserver.cel.values import CIDR, IP, tag, tag_type, untag

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddrError(ValueError):
    pass


def _error(text: str, message: str, at: str | None = None) -> AddrError:
    suffix = f' (at "{at}")' if at is not None else ""
    return AddrError(f'ParseAddr("{text}"): {message}{suffix}')


def _ipv4_fields(text: str, part: str) -> bytes:
    """netip.parseIPv4Fields of `part` (all of `text`, or its embedded IPv4 tail)."""
    fields: list[int] = []
    digits, value = 0, 0
    for index, ch in enumerate(part):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                raise _error(text, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + int(ch), digits + 1
            if value > 255:
                raise _error(text, "IPv4 field has value >255")
        elif ch == ".":
            if index == 0 or index == len(part) - 1 or part[index - 1] == ".":
                raise _error(text, "IPv4 field must have at least one digit", part[index:])
            if len(fields) == 3:
                raise _error(text, "IPv4 address too long")
            fields.append(value)
            value, digits = 0, 0
        else:
            raise _error(text, "unexpected character", part[index:])
    if len(fields) < 3:
        raise _error(text, "IPv4 address too short")
    return bytes([*fields, value])


def _hex_group(text: str, rest: str) -> tuple[int, int]:
    """The leading hex group of `rest`: (value, digits)."""
    value, count = 0, 0
    for ch in rest:
        if ch not in "0123456789abcdefABCDEF":
            break
        value, count = value * 16 + int(ch, 16), count + 1
        if count > 4:
            raise _error(text, "each group must have 4 or less digits", rest)
    if count == 0:
        raise _error(text, "each colon-separated field must have at least one digit", rest)
    return value, count


def _ipv6(text: str) -> tuple[ipaddress.IPv6Address, str]:
    """netip.parseIPv6, with its error texts: the address and its zone."""
    rest, _, zone = text.partition("%")
    if "%" in text and not zone:
        raise _error(text, "zone must be a non-empty string")
    groups: list[int] = []  # 16-bit groups; an embedded IPv4 adds two
    ellipsis = -1
    if rest.startswith("::"):
        ellipsis, rest = 0, rest[2:]
    while rest and len(groups) < 8:
        value, count = _hex_group(text, rest)
        if rest[count:count + 1] == ".":
            if ellipsis < 0 and len(groups) != 6:
                raise _error(text, "embedded IPv4 address must replace the final 2 fields of the address", rest)
            if len(groups) > 6:
                raise _error(text, "too many hex fields to fit an embedded IPv4 at the end of the address", rest)
            quad = _ipv4_fields(text, rest)
            groups += [quad[0] << 8 | quad[1], quad[2] << 8 | quad[3]]
            rest = ""
            break
        groups.append(value)
        rest = rest[count:]
        if not rest:
            break
        if rest[0] != ":":
            raise _error(text, "unexpected character, want colon", rest)
        if len(rest) == 1:
            raise _error(text, "colon must be followed by more characters", rest)
        rest = rest[1:]
        if rest[0] == ":":
            if ellipsis >= 0:
                raise _error(text, "multiple :: in address", rest)
            ellipsis, rest = len(groups), rest[1:]
    if rest:
        raise _error(text, "trailing garbage after address", rest)
    if len(groups) < 8:
        if ellipsis < 0:
            raise _error(text, "address string too short")
        groups[ellipsis:ellipsis] = [0] * (8 - len(groups))
    elif ellipsis >= 0:
        raise _error(text, "the :: must expand to at least one field of zeros")
    return ipaddress.IPv6Address(b"".join(group.to_bytes(2, "big") for group in groups)), zone


def parse_addr(text: str) -> tuple[Address, str]:
    """netip.ParseAddr: the address and its zone."""
    for ch in text:
        if ch == ".":
            return ipaddress.IPv4Address(_ipv4_fields(text, text)), ""
        if ch == ":":
            return _ipv6(text)
        if ch == "%":
            raise _error(text, "missing IPv6 address")
    raise _error(text, "unable to parse IP")


def _is_4in6(addr: Address) -> bool:
    return isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None


@functools.lru_cache(maxsize=1024)  # rules parse the same few addresses over and over
def parse_ip(text: str) -> Address:
    """parseIPAddr of the ip library: zones and IPv4-mapped IPv6 addresses are refused."""
    try:
        addr, zone = parse_addr(text)
    except AddrError as err:
        raise LibraryError(f'IP Address "{text}" parse error during conversion from string: {err}') from None
    if zone:
        raise LibraryError(f'IP address "{text}" with zone value is not allowed')
    if _is_4in6(addr):
        raise LibraryError(f'IPv4-mapped IPv6 address "{text}" is not allowed')
    return addr


@functools.lru_cache(maxsize=1024)
def parse_prefix(text: str) -> tuple[Address, int]:
    """netip.ParsePrefix as the cidr library wraps it (its message prefix appears twice)."""
    head = "network address parse error during conversion from string: "
    slash = text.rfind("/")
    try:
        if slash < 0:
            raise AddrError(f'netip.ParsePrefix("{text}"): no \'/\'')
        addr, bits = _prefix_parts(text, slash)
    except AddrError as err:
        raise LibraryError(head + head + str(err)) from None
    if _is_4in6(addr):
        raise LibraryError(head + f'IPv4-mapped IPv6 address "{text}" is not allowed')
    return addr, bits


def _prefix_parts(text: str, slash: int) -> tuple[Address, int]:
    def fail(message: str) -> AddrError:
        return AddrError(f'netip.ParsePrefix("{text}"): {message}')

    try:
        addr, zone = parse_addr(text[:slash])
    except AddrError as err:
        raise fail(str(err)) from None
    if zone:
        raise fail("IPv6 zones cannot be present in a prefix")
    bits = text[slash + 1:]
    if not bits.isascii() or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
        raise fail(f'bad bits after slash: "{bits}"')
    if int(bits) > addr.max_prefixlen:
        raise fail("prefix length out of range")
    return addr, int(bits)


# ---- values ----


def ip_value(value: Any) -> Address:
    return ipaddress.ip_address(untag(value, IP))


def cidr_value(value: Any) -> tuple[Address, int]:
    addr, _, bits = untag(value, CIDR).rpartition("/")
    return ipaddress.ip_address(addr), int(bits)


def _network(addr: Address, bits: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False)


def ip(value: Any) -> dict[str, str]:
    """ip(<string>) parses; <cidr>.ip() is the prefix's address."""
    if type(value) is str:
        return tag(IP, str(parse_ip(value)))
    if tag_type(value) == CIDR:
        return tag(IP, str(cidr_value(value)[0]))
    raise NoSuchOverload()


def is_ip(text: Any) -> bool:
    return _succeeds(parse_ip, text)


def is_canonical(text: Any) -> bool:
    if type(text) is not str:
        raise NoSuchOverload()
    return str(parse_ip(text)) == text


def _succeeds(parser: Callable[[str], Any], text: Any) -> bool:
    if type(text) is not str:
        raise NoSuchOverload()
    try:
        parser(text)
    except LibraryError:
        return False
    return True


def cidr(text: Any) -> dict[str, str]:
    if type(text) is not str:
        raise NoSuchOverload()
    addr, bits = parse_prefix(text)
    return tag(CIDR, f"{addr}/{bits}")


def contains_ip(value: Any, other: Any) -> bool:
    addr, bits = cidr_value(value)
    target = parse_ip(other) if type(other) is str else ip_value(other)
    return target.version == addr.version and target in _network(addr, bits)


def contains_cidr(value: Any, other: Any) -> bool:
    addr, bits = cidr_value(value)
    other_addr, other_bits = parse_prefix(other) if type(other) is str else cidr_value(other)
    if addr.version != other_addr.version or bits > other_bits:
        return False
    return other_addr in _network(addr, bits)


def masked(value: Any) -> dict[str, str]:
    addr, bits = cidr_value(value)
    return tag(CIDR, str(_network(addr, bits)))


def string(value: Any) -> str:
    """string(<ip>) and string(<cidr>); the interpreter's own string() handles every other type."""
    kind = tag_type(value)
    if kind in (IP, CIDR):
        return untag(value, kind)
    raise NoSuchOverload()


def _link_local_multicast(addr: Address) -> bool:
    if addr.version == 4:
        return addr in ipaddress.IPv4Network("224.0.0.0/24")
    return (int(addr) >> 112) & 0xFF0F == 0xFF02


def _global_unicast(addr: Address) -> bool:
    if addr.version == 4 and str(addr) in ("0.0.0.0", "255.255.255.255"):
        return False
    return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ip": ip,
    "isIP": is_ip,
    "ip.isCanonical": is_canonical,
    "family": lambda value: ip_value(value).version,
    "isUnspecified": lambda value: ip_value(value).is_unspecified,
    "isLoopback": lambda value: ip_value(value).is_loopback,
    "isLinkLocalMulticast": lambda value: _link_local_multicast(ip_value(value)),
    "isLinkLocalUnicast": lambda value: ip_value(value).is_link_local,
    "isGlobalUnicast": lambda value: _global_unicast(ip_value(value)),
    "cidr": cidr,
    "isCIDR": lambda text: _succeeds(parse_prefix, text),
    "containsIP": contains_ip,
    "containsCIDR": contains_cidr,
    "masked": masked,
    "prefixLength": lambda value: cidr_value(value)[1],
    "string": string,
}
