"""Validation rules of k8s.io/apimachinery, with k8s' exact messages.

Three layers, mirroring the Go packages:

* ``pkg/util/validation``: ``is_*`` string checks returning a list of messages
  (empty when valid), plus IP/CIDR checks returning an :data:`ErrorList`;
* ``pkg/apis/meta/v1/validation``: labels, label selectors, managed fields and
  request-option checks;
* ``pkg/api/validation``: name functions and ObjectMeta create/update checks.

Objects are plain dicts (decoded JSON); a missing key reads as Go's zero value.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from kube_apiserver.apimachinery.field import (
    ErrorList,
    OrderedStruct,
    Path,
    forbidden,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
)
from kube_apiserver.apimachinery.schema import parse_group_version

NameFunc = Callable[[str, bool], list[str]]

# --- message helpers ---------------------------------------------------------


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def _blen(value: str) -> int:
    """Go's ``len(s)``: the UTF-8 byte length."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def _matcher(fmt: str) -> Callable[[str], re.Match[str] | None]:
    return re.compile(fmt).fullmatch


# --- identifiers and DNS names ---------------------------------------------

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = f"({_QNAME_CHAR}{_QNAME_EXT_CHAR}*)?{_QNAME_CHAR}"
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_MAX_LENGTH = 63
_qualified_name = _matcher(QUALIFIED_NAME_FMT)


def _qualified_name_regex_error() -> str:
    return regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")


def is_qualified_name(value: str) -> list[str]:
    """A name with an optional DNS-subdomain prefix: ``example.com/MyName``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name " + _qualified_name_regex_error()
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    if not name:
        errs.append("name part " + empty_error())
    elif _blen(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _qualified_name(name):
        errs.append("name part " + _qualified_name_regex_error())
    return errs


LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH = 63
_label_value = _matcher(LABEL_VALUE_FMT)


def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _label_value(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH = 63
_dns1123_label = _matcher(DNS1123_LABEL_FMT)

DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_dns1123_subdomain = _matcher(DNS1123_SUBDOMAIN_FMT)

_DNS1123_LABEL_US_FMT = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT = _DNS1123_LABEL_US_FMT + "(\\." + _DNS1123_LABEL_US_FMT + ")*"
_DNS1123_SUBDOMAIN_US_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'_', '-' or '.', and must start and end with an alphanumeric character"
)
_dns1123_subdomain_us = _matcher(DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT)


def is_dns1123_label(value: str) -> list[str]:
    if len(value) <= DNS1123_LABEL_MAX_LENGTH and _dns1123_label(value):  # a match is ASCII: len is its bytes
        return []
    errs: list[str] = []
    if _blen(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _dns1123_label(value):
        if _dns1123_subdomain(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    if len(value) <= DNS1123_SUBDOMAIN_MAX_LENGTH and _dns1123_subdomain(value):  # a match is ASCII
        return []
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _dns1123_subdomain(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _dns1123_subdomain_us(value):
        errs.append(
            regex_error(_DNS1123_SUBDOMAIN_US_MSG, DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT, "example.com")
        )
    return errs


DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
DNS1035_LABEL_MAX_LENGTH = 63
_dns1035_label = _matcher(DNS1035_LABEL_FMT)


def is_dns1035_label(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _dns1035_label(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


_WILDCARD_FMT = "\\*\\." + DNS1123_SUBDOMAIN_FMT
_WILDCARD_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character"
)
_wildcard = _matcher(_WILDCARD_FMT)


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _wildcard(value):
        errs.append(regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def is_fully_qualified_name(path: Path | None, name: str) -> ErrorList:
    if not name:
        return [required(path, "")]
    if errs := is_dns1123_subdomain(name):
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def is_fully_qualified_domain_name(path: Path | None, name: str) -> ErrorList:
    if not name:
        return [required(path, "")]
    name = name.removesuffix(".")
    if errs := is_dns1123_subdomain(name):
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 2:
        return [invalid(path, name, "should be a domain with at least two segments separated by dots")]
    for label in name.split("."):
        if errs := is_dns1123_label(label):
            return [invalid(path, label, ",".join(errs))]
    return []


_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_http_path = _matcher(_HTTP_PATH_FMT)


def is_domain_prefixed_path(path: Path | None, dp_path: str) -> ErrorList:
    if not dp_path:
        return [required(path, "")]
    segments = dp_path.split("/", 1)
    if len(segments) != 2 or not segments[0] or not segments[1]:
        return [invalid(path, dp_path, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    host, rest = segments
    errs: ErrorList = [invalid(path, host, m) for m in is_dns1123_subdomain(host)]
    if not _http_path(rest):
        errs.append(invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errs


_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'"
)
_c_identifier = _matcher(_C_IDENTIFIER_FMT)


def is_c_identifier(value: str) -> list[str]:
    if _c_identifier(value):
        return []
    return [regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]


# --- numbers, ports, misc strings -------------------------------------------

_MAX_INT32 = 2**31 - 1


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_in_range(value: int, lo: int, hi: int) -> list[str]:
    return [] if lo <= value <= hi else [inclusive_range_error(lo, hi)]


def is_valid_group_id(gid: int) -> list[str]:
    return is_in_range(gid, 0, _MAX_INT32)


def is_valid_user_id(uid: int) -> list[str]:
    return is_in_range(uid, 0, _MAX_INT32)


_port_name_charset = _matcher("[-a-z0-9]+")
_port_name_letter = re.compile("[a-z]").search


def is_valid_port_name(port: str) -> list[str]:
    errs: list[str] = []
    if _blen(port) > 15:
        errs.append(max_len_error(15))
    if not _port_name_charset(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _port_name_letter(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


_PERCENT_FMT = "[0-9]+%"
_percent = _matcher(_PERCENT_FMT)


def is_valid_percent(percent: str) -> list[str]:
    if _percent(percent):
        return []
    return [regex_error("a valid percent string must be a numeric string followed by an ending '%'",
                        _PERCENT_FMT, "1%", "93%")]


_HTTP_HEADER_FMT = "[-A-Za-z0-9]+"
_http_header = _matcher(_HTTP_HEADER_FMT)


def is_http_header_name(value: str) -> list[str]:
    if _http_header(value):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'",
                        _HTTP_HEADER_FMT, "X-Header-Name")]


_ENV_VAR_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, "
    "'_', '-', or '.', and must not start with a digit"
)
_RELAXED_ENV_VAR_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other than '='"
)
_env_var = _matcher(_ENV_VAR_FMT)


def _has_chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    errs: list[str] = []
    if not _env_var(value):
        errs.append(regex_error(_ENV_VAR_MSG, _ENV_VAR_FMT, "my.env-name", "MY_ENV.NAME", "MyEnvName1"))
    return errs + _has_chdir_prefix(value)


def is_relaxed_env_var_name(value: str) -> list[str]:
    errs: list[str] = []
    if not value:
        errs.append("environment variable name " + empty_error())
    if any(ord(ch) > 0x7F or not ch.isprintable() or ch == "=" for ch in value):
        errs.append(_RELAXED_ENV_VAR_MSG)
    return errs


_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_config_map_key = _matcher(_CONFIG_MAP_KEY_FMT)


def is_config_map_key(value: str) -> list[str]:
    if len(value) <= DNS1123_SUBDOMAIN_MAX_LENGTH and _config_map_key(value) and value != "." \
            and not value.startswith(".."):  # valid (a match is ASCII: len is its bytes)
        return []
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _config_map_key(value):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                                _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    return errs + _has_chdir_prefix(value)


# --- IP addresses and CIDRs --------------------------------------------------

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_sloppy_v4 = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)").fullmatch


def _parse_v4_sloppy(value: str) -> ipaddress.IPv4Address | None:
    """IPv4 that tolerates leading zeros (k8s.io/utils/net ``ParseIPSloppy``)."""
    m = _sloppy_v4(value)
    if m is None:
        return None
    octets = [int(g) for g in m.groups()]
    if any(o > 255 for o in octets):
        return None
    return ipaddress.IPv4Address(bytes(octets))


def _parse_v6_sloppy(value: str) -> ipaddress.IPv6Address | None:
    if "%" in value:
        return None
    head, sep, tail = value.rpartition(":")
    if sep and "." in tail:
        v4 = _parse_v4_sloppy(tail)
        if v4 is None:
            return None
        packed = v4.packed
        value = f"{head}:{packed[0] * 256 + packed[1]:x}:{packed[2] * 256 + packed[3]:x}"
    try:
        return ipaddress.IPv6Address(value)
    except ValueError:
        return None


def parse_ip_sloppy(value: str) -> IPAddress | None:
    """Parse an IP like Go's legacy ``net.ParseIP``; None when invalid."""
    for ch in value:
        if ch == ".":
            return _parse_v4_sloppy(value)
        if ch == ":":
            return _parse_v6_sloppy(value)
    return None


def _parse_ip_strict(value: str) -> IPAddress | None:
    """Go's ``netip.ParseAddr`` (zones are rejected earlier by the sloppy parse)."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _is_4in6(ip: IPAddress | None) -> bool:
    return isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None


def go_ip_string(ip: IPAddress) -> str:
    """Go's ``net.IP.String()``."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _parse_ip(path: Path | None, value: str, strict: bool) -> tuple[IPAddress | None, ErrorList]:
    ip = parse_ip_sloppy(value)
    if ip is None:
        return None, [invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    errs: ErrorList = []
    if strict:
        addr = _parse_ip_strict(value)
        if addr is None:
            errs.append(invalid(path, value, "must not have leading 0s"))
        if _is_4in6(addr):
            errs.append(invalid(path, value, "must not be an IPv4-mapped IPv6 address"))
    return ip, errs


def is_valid_ip_for_legacy_field(
    path: Path | None, value: str, strict: bool = True, valid_old_ips: Iterable[str] = ()
) -> ErrorList:
    if value in valid_old_ips:
        return []
    _, errs = _parse_ip(path, value, strict)
    return [e.with_origin("format=ip-sloppy") for e in errs]


def is_valid_ip(path: Path | None, value: str) -> ErrorList:
    """Strict IP validation (``IsValidIP``): valid, no leading 0s, canonical."""
    ip, errs = _parse_ip(path, value, True)
    if not errs and ip is not None and value != go_ip_string(ip):
        errs.append(invalid(path, value, f'must be in canonical form ("{go_ip_string(ip)}")'))
    return [e.with_origin("format=ip-strict") for e in errs]


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _parse_cidr_sloppy(value: str) -> tuple[IPAddress, Network] | None:
    addr, sep, bits = value.partition("/")
    ip = parse_ip_sloppy(addr) if sep else None
    if ip is None or not bits.isdigit() or not bits.isascii():
        return None
    width = 32 if isinstance(ip, ipaddress.IPv4Address) else 128
    prefix_len = int(bits)
    if prefix_len > width:
        return None
    return ip, ipaddress.ip_network(f"{ip}/{prefix_len}", strict=False)


def _go_network_string(net: Network) -> str:
    return f"{go_ip_string(net.network_address)}/{net.prefixlen}"


def _parse_cidr(path: Path | None, value: str, strict: bool) -> tuple[Network | None, ErrorList]:
    parsed = _parse_cidr_sloppy(value)
    if parsed is None:
        return None, [invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    ip, net = parsed
    errs: ErrorList = []
    if strict:
        addr_s, _, bits = value.partition("/")
        addr = _parse_ip_strict(addr_s)
        if addr is None or (len(bits) > 1 and bits[0] == "0"):
            errs.append(invalid(path, value, "must not have leading 0s in IP or prefix length"))
        elif _is_4in6(addr):
            errs.append(invalid(path, value, "must not have an IPv4-mapped IPv6 address"))
        elif ip != net.network_address:
            errs.append(invalid(path, value, "must not have bits set beyond the prefix length"))
    return net, errs


def is_valid_cidr_for_legacy_field(
    path: Path | None, value: str, strict: bool = True, valid_old_cidrs: Iterable[str] = ()
) -> ErrorList:
    if value in valid_old_cidrs:
        return []
    return _parse_cidr(path, value, strict)[1]


def is_valid_cidr(path: Path | None, value: str) -> ErrorList:
    """Strict subnet-style CIDR validation (``IsValidCIDR``)."""
    net, errs = _parse_cidr(path, value, True)
    if not errs and net is not None and value != _go_network_string(net):
        errs.append(invalid(path, value, f'must be in canonical form ("{_go_network_string(net)}")'))
    return errs


def ip_family_of(value: str) -> str:
    """netutils.IPFamilyOfString as a core/v1 IPFamily: "IPv4", "IPv6", or "" when not an IP."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return ""
    return "IPv6" if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None else "IPv4"


def validate_non_special_ip(path: Path | None, value: str) -> ErrorList:
    """ValidateNonSpecialIP (pkg/apis/core/validation): no unspecified, loopback or link-local addresses."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return [invalid(path, value, "must be a valid IP address").with_origin("format=ip-sloppy")]
    plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
    checks = (
        (plain.is_unspecified, f"may not be unspecified ({value})"),
        (plain.is_loopback, "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
        (plain.is_link_local, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
        (_link_local_multicast(plain), "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"),
    )
    return [invalid(path, value, msg).with_origin("format=non-special-ip") for bad, msg in checks if bad]


def _link_local_multicast(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.IPv4Network("224.0.0.0/24")
    return ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02


# --- resource names (pkg/api/validation) -------------------------------------


def _mask_trailing_dash(name: str) -> str:
    """k8s' ``maskTrailingDash`` (it really drops two characters)."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


validate_namespace_name = name_is_dns_label
validate_service_account_name = name_is_dns_subdomain

NAME_MAY_NOT_BE = (".", "..")
NAME_MAY_NOT_CONTAIN = ("/", "%")


def is_valid_path_segment_prefix(name: str) -> list[str]:
    return [f"may not contain '{bad}'" for bad in NAME_MAY_NOT_CONTAIN if bad in name]


def is_valid_path_segment_name(name: str) -> list[str]:
    if name in NAME_MAY_NOT_BE:
        return [f"may not be '{name}'"]
    return is_valid_path_segment_prefix(name)


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """k8s' ``path.ValidatePathSegmentName``, the name rule for generic resources."""
    return is_valid_path_segment_prefix(name) if prefix else is_valid_path_segment_name(name)


IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"


def validate_nonnegative_field(value: int, path: Path) -> ErrorList:
    if value < 0:
        return [invalid(path, value, IS_NEGATIVE_ERROR_MSG).with_origin("minimum")]
    return []


# --- labels and label selectors (pkg/apis/meta/v1/validation) ----------------


def validate_label_name(name: str, path: Path) -> ErrorList:
    return [invalid(path, name, m).with_origin("labelKey") for m in is_qualified_name(name)]


# A valid qualified name (an optional DNS-subdomain prefix and '/', then the name), lengths aside: what
# is_qualified_name accepts when the prefix is at most 253 bytes and the name at most 63 (a match is ASCII).
_qualified_name_shape = _matcher(f"(?:{DNS1123_SUBDOMAIN_FMT}/)?{QUALIFIED_NAME_FMT}")


def _is_valid_qualified_name(value: str) -> bool:
    """is_qualified_name(value) == [], in one match for the usual valid name."""
    if not _qualified_name_shape(value):
        return False
    prefix, _, name = value.rpartition("/")
    return len(name) <= QUALIFIED_NAME_MAX_LENGTH and len(prefix) <= DNS1123_SUBDOMAIN_MAX_LENGTH


def validate_labels(labels: Mapping[str, str] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    for key, value in (labels or {}).items():
        if len(value) <= LABEL_VALUE_MAX_LENGTH and _label_value(value) and _is_valid_qualified_name(key):
            continue  # valid: no messages to make
        errs.extend(validate_label_name(key, path))
        errs.extend(invalid(path, value, m) for m in is_valid_label_value(value))
    return errs


def validate_label_selector(
    selector: Mapping[str, Any] | None, path: Path, allow_invalid_label_value: bool = False,
    allow_unknown_operator: bool = False,
) -> ErrorList:
    """``ValidateLabelSelector`` for a metav1.LabelSelector dict."""
    if selector is None:
        return []
    errs = validate_labels(selector.get("matchLabels"), path.child("matchLabels"))
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        errs.extend(_validate_selector_requirement(
            expr, path.child("matchExpressions").index(i), allow_invalid_label_value, allow_unknown_operator))
    return errs


def _validate_selector_requirement(
    expr: Mapping[str, Any], path: Path, allow_invalid_value: bool, allow_unknown_operator: bool
) -> ErrorList:
    errs: ErrorList = []
    values = expr.get("values") or []
    operator = expr.get("operator") or ""
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(required(path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(path.child("values"),
                                  "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif not allow_unknown_operator:
        errs.append(invalid(path.child("operator"), operator, "not a valid selector operator"))
    errs.extend(validate_label_name(expr.get("key") or "", path.child("key")))
    if not allow_invalid_value:
        for i, value in enumerate(values):
            errs.extend(invalid(path.child("values").index(i), value, m) for m in is_valid_label_value(value))
    return errs


# --- managed fields and request options --------------------------------------

FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256


def validate_field_manager(manager: str, path: Path) -> ErrorList:
    if manager.isprintable() and _blen(manager) <= FIELD_MANAGER_MAX_LENGTH:  # every character printable
        return []
    errs: ErrorList = []
    if _blen(manager) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, "", FIELD_MANAGER_MAX_LENGTH))
    pos = 0
    for ch in manager:
        if not ch.isprintable():
            errs.append(invalid(path, manager, f"invalid character U+{ord(ch):04X} (at position {pos})"))
        pos += _blen(ch)
    return errs


def validate_managed_fields(entries: Iterable[Mapping[str, Any]] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, entry in enumerate(entries or ()):
        if _valid_managed_fields_entry(entry):
            continue  # the usual entry: no paths to make
        entry_path = path.index(i)
        operation = entry.get("operation") or ""
        if operation not in ("Apply", "Update"):
            errs.append(invalid(entry_path.child("operation"), operation, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errs.append(invalid(entry_path.child("fieldsType"), fields_type, "must be `FieldsV1`"))
        errs.extend(validate_field_manager(entry.get("manager") or "", entry_path.child("manager")))
        if _blen(entry.get("subresource") or "") > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(entry_path.child("subresource"), "", MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


def _valid_managed_fields_entry(entry: Mapping[str, Any]) -> bool:
    """Whether validate_managed_fields finds nothing wrong with the entry."""
    manager = entry.get("manager") or ""
    return ((entry.get("operation") or "") in ("Apply", "Update") and (entry.get("fieldsType") or "") in ("", "FieldsV1")
            and manager.isprintable() and _blen(manager) <= FIELD_MANAGER_MAX_LENGTH
            and _blen(entry.get("subresource") or "") <= MAX_SUBRESOURCE_NAME_LENGTH)


def validate_dry_run(path: Path, dry_run: list[str] | None) -> ErrorList:
    if all(v == "All" for v in dry_run or ()):
        return []
    return [not_supported(path, list(dry_run or ()), ["All"])]


_FIELD_VALIDATION_VALUES = ("", "Ignore", "Strict", "Warn")


def validate_field_validation(path: Path, value: str) -> ErrorList:
    if value in _FIELD_VALIDATION_VALUES:
        return []
    return [not_supported(path, value, _FIELD_VALIDATION_VALUES)]


def _validate_write_options(options: Mapping[str, Any]) -> ErrorList:
    errs = validate_field_manager(options.get("fieldManager") or "", Path("fieldManager"))
    errs += validate_dry_run(Path("dryRun"), options.get("dryRun"))
    return errs + validate_field_validation(Path("fieldValidation"), options.get("fieldValidation") or "")


def validate_create_options(options: Mapping[str, Any]) -> ErrorList:
    return _validate_write_options(options)


def validate_update_options(options: Mapping[str, Any]) -> ErrorList:
    return _validate_write_options(options)


APPLY_PATCH_TYPES = ("application/apply-patch+yaml", "application/apply-patch+cbor")


def validate_patch_options(options: Mapping[str, Any], patch_type: str) -> ErrorList:
    errs: ErrorList = []
    if patch_type in APPLY_PATCH_TYPES:
        if not options.get("fieldManager"):
            errs.append(required(Path("fieldManager"), "is required for apply patch"))
    elif options.get("force") is not None:
        errs.append(forbidden(Path("force"), "may not be specified for non-apply patch"))
    return errs + _validate_write_options(options)


_PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


def validate_delete_options(options: Mapping[str, Any]) -> ErrorList:
    errs: ErrorList = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        errs.append(invalid(Path("propagationPolicy"), policy,
                            "orphanDependents and deletionPropagation cannot be both set"))
    if policy is not None and policy not in _PROPAGATION_POLICIES:
        errs.append(not_supported(Path("propagationPolicy"), policy, [*_PROPAGATION_POLICIES, "nil"]))
    errs += validate_dry_run(Path("dryRun"), options.get("dryRun"))
    return errs + _validate_ignore_store_read_error(options)


_STORE_READ_ERROR_CONFLICTS = (
    ("dryRun", "cannot be set together with .dryRun"),
    ("propagationPolicy", "cannot be set together with .propagationPolicy"),
    ("orphanDependents", "cannot be set together with .orphanDependents"),
    ("gracePeriodSeconds", "cannot be set together with .gracePeriodSeconds"),
    ("preconditions", "cannot be set together with .preconditions"),
)


def _validate_ignore_store_read_error(options: Mapping[str, Any]) -> ErrorList:
    if not options.get("ignoreStoreReadErrorWithClusterBreakingPotential"):
        return []
    path = Path("ignoreStoreReadErrorWithClusterBreakingPotential")
    present = {k for k, v in options.items() if v is not None and (k != "dryRun" or v)}
    return [invalid(path, True, msg) for key, msg in _STORE_READ_ERROR_CONFLICTS if key in present]


def validate_table_options(include_object: str) -> ErrorList:
    if include_object in ("Metadata", "None", "Object", ""):
        return []
    return [invalid(Path("includeObject"), include_object, "must be 'Metadata', 'Object', 'None', or empty")]


# --- annotations, owner references, finalizers (pkg/api/validation) ----------

TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)


def annotations_size(annotations: Mapping[str, str] | None) -> int:
    return sum(_blen(k) + _blen(v) for k, v in (annotations or {}).items())


def validate_annotations(annotations: Mapping[str, str] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    for key in annotations or {}:
        lowered = key.lower()
        if not _is_valid_qualified_name(lowered):
            errs.extend(invalid(path, key, m) for m in is_qualified_name(lowered))
    if annotations_size(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


_BANNED_OWNERS = {("", "v1", "Event")}


def _group_version(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``; an unparsable value yields an empty GV."""
    return parse_group_version(api_version) or ("", "")


def _owner_struct(ref: Mapping[str, Any]) -> OrderedStruct:
    items: list[tuple[str, Any]] = [(k, ref.get(k) or "") for k in ("apiVersion", "kind", "name", "uid")]
    items += [(k, ref[k]) for k in ("controller", "blockOwnerDeletion") if ref.get(k) is not None]
    return OrderedStruct(tuple(items))


def _validate_owner_reference(ref: Mapping[str, Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
    group, version = _group_version(api_version)
    if not version:
        errs.append(invalid(path.child("apiVersion"), api_version, "version must not be empty"))
    if not kind:
        errs.append(invalid(path.child("kind"), kind, "must not be empty"))
    for key in ("name", "uid"):
        if not ref.get(key):
            errs.append(invalid(path.child(key), ref.get(key) or "", "must not be empty"))
    if (group, version, kind) in _BANNED_OWNERS:
        errs.append(invalid(path, _owner_struct(ref),
                            f"{group}/{version}, Kind={kind} is disallowed from being an owner"))
    return errs


def validate_owner_references(refs: list[Mapping[str, Any]] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    first_controller = ""
    for ref in refs or ():
        errs.extend(_validate_owner_reference(ref, path))
        if ref.get("controller") is not True:
            continue
        current = f"{ref.get('kind') or ''}/{ref.get('name') or ''}"
        if not first_controller:
            first_controller = current
            continue
        errs.append(invalid(
            path, [_owner_struct(r) for r in refs or ()],
            'Only one reference can have Controller set to true. '
            f'Found "true" in references for {first_controller} and {current}'))
    return errs


FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"


def validate_finalizer_name(name: str, path: Path) -> ErrorList:
    return [invalid(path, name, m) for m in is_qualified_name(name)]


def validate_finalizers(finalizers: list[str] | None, path: Path) -> ErrorList:
    errs: ErrorList = []
    for name in finalizers or ():
        errs.extend(validate_finalizer_name(name, path))
    names = set(finalizers or ())
    if {FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS} <= names:
        errs.append(invalid(path, list(finalizers or ()),
                            f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and "
                            f"{FINALIZER_DELETE_DEPENDENTS} cannot be both set"))
    return errs


def validate_no_new_finalizers(new: list[str] | None, old: list[str] | None, path: Path) -> ErrorList:
    extra = sorted(set(new or ()) - set(old or ()))
    if not extra:
        return []
    shown = ", ".join(go_quote(x) for x in extra)
    return [forbidden(path, "no new finalizers can be added if the object is being deleted, "
                            f"found new finalizers []string{{{shown}}}")]


def _same_time(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    try:
        return datetime.fromisoformat(a) == datetime.fromisoformat(b)
    except ValueError:
        return False


def validate_immutable_field(new: Any, old: Any, path: Path) -> ErrorList:
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]


# --- ObjectMeta ----------------------------------------------------------------


def _s(meta: Mapping[str, Any], key: str) -> str:
    return meta.get(key) or ""


def validate_object_meta(
    meta: Mapping[str, Any], requires_namespace: bool, name_fn: NameFunc, path: Path | None = None
) -> ErrorList:
    """``ValidateObjectMetaAccessor``: metadata checks on create."""
    path = path or Path("metadata")
    errs = _validate_names(meta, requires_namespace, name_fn, path)
    errs += validate_nonnegative_field(meta.get("generation") or 0, path.child("generation"))
    return errs + _validate_meta_collections(meta, path, with_finalizers=True)


def _validate_names(meta: Mapping[str, Any], requires_namespace: bool, name_fn: NameFunc, path: Path) -> ErrorList:
    errs: ErrorList = []
    generate_name, name, namespace = _s(meta, "generateName"), _s(meta, "name"), _s(meta, "namespace")
    if generate_name:
        errs += [invalid(path.child("generateName"), generate_name, m) for m in name_fn(generate_name, True)]
    if not name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        errs += [invalid(path.child("name"), name, m) for m in name_fn(name, False)]
    if not requires_namespace:
        if namespace:
            errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    elif not namespace:
        errs.append(required(path.child("namespace"), ""))
    else:
        errs += [invalid(path.child("namespace"), namespace, m) for m in validate_namespace_name(namespace, False)]
    return errs


def _validate_meta_collections(meta: Mapping[str, Any], path: Path, with_finalizers: bool) -> ErrorList:
    # An absent or empty collection has nothing to report: its path is made only for one that is set.
    errs: ErrorList = []
    if labels := meta.get("labels"):
        errs += validate_labels(labels, path.child("labels"))
    if annotations := meta.get("annotations"):
        errs += validate_annotations(annotations, path.child("annotations"))
    if owners := meta.get("ownerReferences"):
        errs += validate_owner_references(owners, path.child("ownerReferences"))
    if with_finalizers and (finalizers := meta.get("finalizers")):
        errs += validate_finalizers(finalizers, path.child("finalizers"))
    if managed := meta.get("managedFields"):
        errs += validate_managed_fields(managed, path.child("managedFields"))
    return errs


_IMMUTABLE_META_FIELDS = ("name", "namespace", "uid")


def validate_object_meta_update(
    new: Mapping[str, Any], old: Mapping[str, Any], path: Path | None = None
) -> ErrorList:
    """``ValidateObjectMetaAccessorUpdate``: metadata checks on update."""
    path = path or Path("metadata")
    errs: ErrorList = []
    if old.get("deletionTimestamp") is not None:
        errs += validate_no_new_finalizers(new.get("finalizers"), old.get("finalizers"), path.child("finalizers"))
    if not _s(new, "resourceVersion"):
        errs.append(invalid(path.child("resourceVersion"), "", "must be specified for an update"))
    if (new.get("generation") or 0) < (old.get("generation") or 0):
        errs.append(invalid(path.child("generation"), new.get("generation") or 0, "must not be decremented"))
    for key in _IMMUTABLE_META_FIELDS:
        errs += validate_immutable_field(_s(new, key), _s(old, key), path.child(key))
    errs += _validate_immutable_times(new, old, path)
    errs += validate_immutable_field(
        new.get("deletionGracePeriodSeconds"), old.get("deletionGracePeriodSeconds"),
        path.child("deletionGracePeriodSeconds"))
    return errs + _validate_meta_collections(new, path, with_finalizers=False)


def _validate_immutable_times(new: Mapping[str, Any], old: Mapping[str, Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    for key in ("creationTimestamp", "deletionTimestamp"):
        new_t, old_t = new.get(key) or None, old.get(key) or None
        if not _same_time(new_t, old_t):
            errs.append(invalid(path.child(key), new_t, FIELD_IMMUTABLE_ERROR_MSG))
    return errs
