"""Kubernetes' URL library: url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath,
getQuery. Parsing follows Go's net/url (`url.ParseRequestURI` must accept the string, then
`url.Parse` builds the value), including its error texts. A URL value is the tagged original string;
cel-go compares URLs by their re-serialized form, which only differs for unusual spellings."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kube_apiserver.cel.errors import LibraryError, NoSuchOverload
from kube_apiserver.cel.values import URL, tag, untag

_SCHEME_CHAR = re.compile(r"[a-zA-Z][a-zA-Z0-9+\-.]*")
_HEX = "0123456789abcdefABCDEF"
_PATH_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~$&+,/:;=@!'()*[]%")
_HOST_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$&'()*+,;=:[]<>\"")


class URLError(ValueError):
    pass


@dataclass
class ParsedURL:
    scheme: str = ""
    opaque: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""


def _unescape(text: str, host: bool = False) -> str:
    """url.unescape for path and host components."""
    out, pos = bytearray(), 0
    while pos < len(text):
        ch = text[pos]
        if ch == "%":
            code = text[pos:pos + 3]
            if len(code) < 3 or code[1] not in _HEX or code[2] not in _HEX:
                raise URLError(f'invalid URL escape "{code}"')
            if host and int(code[1], 16) < 8 and code != "%25":
                raise URLError(f'invalid URL escape "{code}"')
            out.append(int(code[1:], 16))
            pos += 3
            continue
        if host and ch < "\x80" and ch not in _HOST_OK:
            raise URLError(f'invalid character "{ch}" in host name')
        out.extend(ch.encode())
        pos += 1
    return out.decode("utf-8", "replace")


def _valid_port(port: str) -> bool:
    return port == "" or (port.startswith(":") and port[1:].isdigit() and port[1:].isascii()) or port == ":"


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise URLError("missing ']' in host")
        if not _valid_port(host[end + 1:]):
            raise URLError(f'invalid port "{host[end + 1:]}" after host')
    elif (colon := host.rfind(":")) >= 0 and not _valid_port(host[colon:]):
        raise URLError(f'invalid port "{host[colon:]}" after host')
    return _unescape(host, host=True)


def _split_scheme(raw: str) -> tuple[str, str]:
    match = _SCHEME_CHAR.match(raw)
    if raw.startswith(":"):
        raise URLError("missing protocol scheme")
    if match and raw[match.end():match.end() + 1] == ":":
        return match.group().lower(), raw[match.end() + 1:]
    return "", raw


def parse(raw: str, via_request: bool) -> ParsedURL:
    """net/url's parse(); errors carry Go's wording, wrapped by `parse "<raw>": `."""
    try:
        return _parse(raw, via_request)
    except URLError as err:
        raise URLError(f'parse "{raw}": {err}') from None


def _parse(raw: str, via_request: bool) -> ParsedURL:
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise URLError("empty url")
    url = ParsedURL()
    if raw == "*":
        url.path = "*"
        return url
    url.scheme, rest = _split_scheme(raw)
    if not via_request and "#" in rest:
        rest = rest[:rest.index("#")]  # url.Parse drops the fragment; it is not kept here
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if url.scheme:
            url.opaque = rest
            return url
        if via_request:
            raise URLError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    if (url.scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        host = authority[authority.rfind("@") + 1:]
        url.host = _parse_host(host)
    url.path = _unescape(rest)
    url.raw_path = rest
    return url


def escaped_path(url: ParsedURL) -> str:
    """URL.EscapedPath: the path as written when that is a valid encoding, else re-escaped."""
    if all(ch in _PATH_OK for ch in url.raw_path):
        return url.raw_path
    return "".join(ch if ch in _PATH_OK and ch != "%" and ch not in "!'()*[]" else
                   "".join(f"%{byte:02X}" for byte in ch.encode()) for ch in url.path)


def _split_host_port(host: str) -> tuple[str, str]:
    name, port = host, ""
    colon = host.rfind(":")
    if colon >= 0 and _valid_port(host[colon:]):
        name, port = host[:colon], host[colon + 1:]
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name, port


def parse_query(raw: str) -> dict[str, list[str]]:
    """url.ParseQuery as URL.Query() uses it: malformed pairs (and ';') are dropped."""
    values: dict[str, list[str]] = {}
    for pair in raw.split("&"):
        if not pair or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key.replace("+", " ")), _unescape(value.replace("+", " "))
        except URLError:
            continue
        values.setdefault(key, []).append(value)
    return values


# ---- CEL functions ----


def _request_uri(text: str) -> ParsedURL:
    return parse(text, via_request=True)


def url(text: Any) -> dict[str, str]:
    if type(text) is not str:
        raise NoSuchOverload()
    try:
        _request_uri(text)
        parse(text, via_request=False)
    except URLError as err:
        raise LibraryError(f"URL parse error during conversion from string: {err}") from None
    return tag(URL, text)


def is_url(text: Any) -> bool:
    if type(text) is not str:
        raise NoSuchOverload()
    try:
        _request_uri(text)
    except URLError:
        return False
    return True


def _value(value: Any) -> ParsedURL:
    return parse(untag(value, URL), via_request=False)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "url": url,
    "isURL": is_url,
    "getScheme": lambda value: _value(value).scheme,
    "getHost": lambda value: _value(value).host,
    "getHostname": lambda value: _split_host_port(_value(value).host)[0],
    "getPort": lambda value: _split_host_port(_value(value).host)[1],
    "getEscapedPath": lambda value: escaped_path(_value(value)),
    "getQuery": lambda value: parse_query(_value(value).raw_query),
}
