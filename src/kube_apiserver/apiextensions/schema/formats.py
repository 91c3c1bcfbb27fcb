"""String formats of CRD schemas (kube-openapi pkg/validation/strfmt, govalidator, and
apiextensions' formats.go, which decides which formats a schema may use).

Each checker mirrors the Go function that the format registry calls (``time.Parse``,
``net.ParseIP``, ``url.ParseRequestURI``, ``net/mail.ParseAddress``...).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from collections.abc import Callable
from datetime import date

from ...apimachinery.goduration import parse_strfmt_duration_ns

# formats.go: formats known at each Kubernetes version (names without dashes, as go-openapi normalizes)
_FORMATS_1_0 = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime",
})
_FORMATS_1_34 = frozenset({"k8sshortname", "k8slongname"})

# kube-apiserver 1.34 validates CRDs at its minimum compatibility version, 1.33
DEFAULT_COMPATIBILITY_VERSION = (1, 33)


def normalize(name: str) -> str:
    """go-openapi's format name normalization: dashes removed."""
    return name.replace("-", "")


def supported_string_formats(version: tuple[int, int] = DEFAULT_COMPATIBILITY_VERSION) -> frozenset[str]:
    return _FORMATS_1_0 | _FORMATS_1_34 if version >= (1, 34) else _FORMATS_1_0


def effective_format(schema_type: str, fmt: str, version: tuple[int, int] = DEFAULT_COMPATIBILITY_VERSION) -> str:
    """``StripUnsupportedFormatsPostProcessorForVersion``: the format kept for a schema node."""
    if not fmt:
        return ""
    if schema_type in ("", "string"):
        return fmt if normalize(fmt) in supported_string_formats(version) else ""
    if schema_type == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if schema_type == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


# --- dates and durations ------------------------------------------------------------

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z")


def is_date(s: str) -> bool:
    m = _DATE.match(s)
    if m is None:
        return False
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def is_date_time(s: str) -> bool:
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    m = _TIME.match(parts[1])
    return m is not None and m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def is_duration(s: str) -> bool:
    """strfmt.ParseDuration accepts ``s``: a Go duration, or "<n> <unit>" pairs anywhere in the text."""
    try:
        parse_strfmt_duration_ns(s)
    except ValueError:
        return False
    return True


# --- network -----------------------------------------------------------------------


def _dtoi(s: str) -> tuple[int, int]:
    """Go's net.dtoi: (value, digits consumed); value -1 when there is no digit or it is too big."""
    i, n = 0, 0
    while i < len(s) and "0" <= s[i] <= "9":
        n = n * 10 + ord(s[i]) - 48
        if n >= 0xFFFFFF:
            return -1, i
        i += 1
    return (n, i) if i else (-1, 0)


def parse_ipv4_sloppy(s: str) -> bool:
    """Go's pre-1.17 parseIPv4: four dotted decimal bytes, leading zeros allowed."""
    parts = s.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        n, used = _dtoi(part)
        if n < 0 or used != len(part) or n > 0xFF:
            return False
    return True


def _strip_zone_and_v4(s: str, sloppy: bool) -> str | None:
    if "%" in s:
        return None
    head, sep, tail = s.rpartition(":")
    if sep and "." in tail:
        if not parse_ipv4_sloppy(tail) or (not sloppy and any(len(p) > 1 and p[0] == "0" for p in tail.split("."))):
            return None
        tail = ".".join(str(int(p)) for p in tail.split("."))
        return f"{head}:{tail}"
    return s


def parse_ipv6(s: str, sloppy: bool = False) -> bool:
    cleaned = _strip_zone_and_v4(s, sloppy)
    if cleaned is None:
        return False
    try:
        ipaddress.IPv6Address(cleaned)
    except ValueError:
        return False
    return True


def parse_ip_sloppy(s: str) -> bool:
    """k8s.io/utils/net ParseIPSloppy is not nil."""
    return parse_ipv6(s, sloppy=True) if ":" in s else parse_ipv4_sloppy(s)


def is_ipv4(s: str) -> bool:
    return parse_ip_sloppy(s) and "." in s


def is_ipv6(s: str) -> bool:
    """govalidator.IsIPv6: net.ParseIP (strict) and a colon."""
    if ":" not in s:
        return False
    return parse_ipv6(s)


def is_cidr(s: str) -> bool:
    addr, sep, mask = s.partition("/")
    if not sep:
        return False
    bits = 32 if parse_ipv4_sloppy(addr) else 128 if ":" in addr and parse_ipv6(addr, sloppy=True) else 0
    n, used = _dtoi(mask)
    return bits > 0 and n >= 0 and used == len(mask) and n <= bits


_MAC_COLON = {n: re.compile(rf"[0-9a-fA-F]{{2}}([:-])[0-9a-fA-F]{{2}}(?:\1[0-9a-fA-F]{{2}}){{{n - 2}}}\Z")
              for n in (6, 8, 20)}
_MAC_DOT = {n: re.compile(rf"[0-9a-fA-F]{{4}}(?:\.[0-9a-fA-F]{{4}}){{{n // 2 - 1}}}\Z") for n in (6, 8, 20)}


def is_mac(s: str) -> bool:
    """net.ParseMAC: 6, 8 or 20 octets as aa:bb.., aa-bb.. or aabb.ccdd.."""
    if len(s) < 14:
        return False
    if s[2] in ":-":
        return any(m.match(s) for m in _MAC_COLON.values())
    if s[4] == ".":
        return any(m.match(s) for m in _MAC_DOT.values())
    return False


def _host_class(ch: str) -> str:
    """Classify a character for HostnamePattern's [a-zA-Z0-9\\p{S}\\p{L}] classes."""
    if ch.isascii():
        if ch.isalpha():
            return "a"
        return "0" if ch.isdigit() else ch if ch in "-." else "!"
    category = unicodedata.category(ch)[0]
    return "a" if category == "L" else "s" if category == "S" else "!"


_HOSTNAME = re.compile(
    r"(?:[a0s](?:(?:-?[a0s]{0,62})?)|(?:[a0s](?:(?:[a0s\-]{0,61}[a0s])?)(?:\.)){1,}(?:[a]){2,63})\Z")


def is_hostname(s: str) -> bool:
    if not _HOSTNAME.match("".join(_host_class(c) for c in s)):
        return False
    return len(s.encode()) <= 255 and all(len(p.encode()) <= 63 for p in s.split("."))


# --- URIs and emails ------------------------------------------------------------------

_SCHEME_CHARS = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")
_HOST_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:\[\]<>\"%]*\Z")
_USERINFO_OK = re.compile(r"[A-Za-z0-9\-._:~!$&'()*+,;=%@]*\Z")


def _split_scheme(s: str) -> tuple[str, str] | None:
    for i, ch in enumerate(s):
        if ch == ":":
            return (s[:i], s[i + 1:]) if i else None
        if not (ch.isascii() and (ch.isalpha() or (i and (ch.isdigit() or ch in "+-.")))):
            return "", s
    return "", s


def _valid_host(host: str) -> bool:
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return False
        port = host[end + 1:]
        return (not port or (port[0] == ":" and port[1:].isdigit()) or port == ":") and _valid_escapes(host)
    if ":" in host:
        port = host[host.rfind(":") + 1:]
        if port and not (port.isascii() and port.isdigit()):
            return False
    return bool(_HOST_OK.match(host)) and _valid_escapes(host)


def _valid_escapes(s: str) -> bool:
    return not _BAD_ESCAPE.search(s)


def is_request_uri(s: str) -> bool:
    """url.ParseRequestURI accepts ``s`` (absolute URI or absolute path)."""
    if not s or any(ord(c) < 0x20 or ord(c) == 0x7F for c in s):
        return False
    if s == "*":
        return True
    split = _split_scheme(s)
    if split is None:
        return False
    scheme, rest = split
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/"):
        return bool(scheme)
    if scheme and rest.startswith("//"):
        authority, _, path = rest[2:].partition("/")
        user, at, host = authority.rpartition("@")
        if at and not _USERINFO_OK.match(user):
            return False
        if not _valid_host(host):
            return False
        rest = path
    return _valid_escapes(rest)


_ATEXT = r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\U0010ffff]+"
_DOT_ATOM = rf"{_ATEXT}(?:\.{_ATEXT})*"
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_ADDR_SPEC = rf"(?:{_DOT_ATOM}|{_QUOTED})@(?:{_DOT_ATOM}|\[[^\[\]\\]*\])"


@functools.cache
def _email() -> re.Pattern[str]:
    # Compiled on first use: the non-ASCII range makes it cost ~25 ms, more than every other regex here.
    return re.compile(rf"\s*(?:{_ADDR_SPEC}|(?:[^<>]*?)\s*<{_ADDR_SPEC}>)\s*\Z")


def is_email(s: str) -> bool:
    """net/mail.ParseAddress, for addr-spec and ``Name <addr-spec>`` forms."""
    return bool(_email().match(s))


# --- identifiers, colors, numbers -------------------------------------------------------

_UUID = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID3 = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID4 = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z")
_UUID5 = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z")
_CREDIT_CARD = re.compile(
    r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})\Z", re.ASCII)
_HEXCOLOR = re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_BYTE = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
_RGBCOLOR = re.compile(rf"rgb\(\s*{_BYTE}\s*,\s*{_BYTE}\s*,\s*{_BYTE}\s*\)\Z", re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z")
_SSN = re.compile(r"\d{3}[- ]?\d{2}[- ]?\d{4}\Z", re.ASCII)
_SHORT_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_LONG_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def is_credit_card(s: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", s)
    if not _CREDIT_CARD.match(digits):
        return False
    total, double = 0, False
    for ch in reversed(digits):
        n = int(ch) * (2 if double else 1)
        total += n % 10 + 1 if n >= 10 else n
        double = not double
    return total % 10 == 0


def is_isbn(s: str, version: int) -> bool:
    clean = re.sub(r"[\s-]+", "", s)
    if version == 10:
        if not re.fullmatch(r"[0-9]{9}X|[0-9]{10}", clean, flags=re.ASCII):
            return False
        total = sum((i + 1) * int(clean[i]) for i in range(9))
        total += 100 if clean[9] == "X" else 10 * int(clean[9])
        return total % 11 == 0
    if not re.fullmatch(r"[0-9]{13}", clean, flags=re.ASCII):
        return False
    total = sum((1, 3)[i % 2] * int(clean[i]) for i in range(12))
    return int(clean[12]) - (10 - total % 10) % 10 == 0


def _matches(rx: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda s: rx.match(s) is not None


CHECKERS: dict[str, Callable[[str], bool]] = {
    "date": is_date, "datetime": is_date_time, "duration": is_duration, "uri": is_request_uri,
    "email": is_email, "hostname": is_hostname, "ipv4": is_ipv4, "ipv6": is_ipv6, "cidr": is_cidr,
    "mac": is_mac, "uuid": _matches(_UUID), "uuid3": _matches(_UUID3), "uuid4": _matches(_UUID4),
    "uuid5": _matches(_UUID5), "isbn": lambda s: is_isbn(s, 10) or is_isbn(s, 13),
    "isbn10": lambda s: is_isbn(s, 10), "isbn13": lambda s: is_isbn(s, 13), "creditcard": is_credit_card,
    "ssn": lambda s: len(s) == 11 and _SSN.match(s) is not None, "hexcolor": _matches(_HEXCOLOR),
    "rgbcolor": _matches(_RGBCOLOR), "byte": _matches(_BASE64), "password": lambda s: True,
    "bsonobjectid": lambda s: re.fullmatch(r"[0-9a-fA-F]{24}", s) is not None,
    "k8sshortname": lambda s: len(s) <= 63 and _SHORT_NAME.match(s) is not None,
    "k8slongname": lambda s: len(s) <= 253 and _LONG_NAME.match(s) is not None,
}


def checker(fmt: str) -> Callable[[str], bool] | None:
    """The validator the registry uses for a (kept) string format, or None if unknown."""
    return CHECKERS.get(normalize(fmt))
