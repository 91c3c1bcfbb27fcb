"""Webhook client config checks shared by admission webhooks and CRD conversion webhooks
(k8s.io/apiserver/pkg/util/webhook: ValidateWebhookURL, ValidateWebhookService, ValidateCABundle), with
Go net/url's parse errors where users meet them."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any
from urllib.parse import unquote

from cryptography import x509

from ...apimachinery import field, pem
from ...apimachinery.field import ErrorList, Path
from ...apimachinery.validation import is_dns1123_subdomain, is_valid_port_num

_FORM = "; desired format: https://host[/path]"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})(.{0,2})", re.DOTALL)


class _URLError(ValueError):
    pass


def _check_escapes(part: str) -> None:
    if match := _BAD_ESCAPE.search(part):
        raise _URLError(f'invalid URL escape "%{match.group(1)}"')


def _parse_authority(authority: str) -> tuple[str | None, str]:
    """(userinfo or None, host); raises on a bad port, as url.parseAuthority does."""
    userinfo, at, host = authority.rpartition("@")
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise _URLError("missing ']' in host")
        port = host[end + 1 :]
    else:
        colon = host.rfind(":")
        port = host[colon:] if colon >= 0 else ""
    if port and not (port.startswith(":") and port[1:].isdigit() or port == ":"):
        raise _URLError(f'invalid port "{port}" after host')
    _check_escapes(host)
    return (unquote(userinfo) if at else None), unquote(host)


def parse_url(raw: str) -> dict[str, Any]:
    """The parts of Go's url.Parse that webhook validation reads; raises _URLError like it."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise _URLError("net/url: invalid control character in URL")
    rest, _, fragment = raw.partition("#")
    _check_escapes(fragment)
    parts: dict[str, Any] = {
        "scheme": "",
        "host": "",
        "user": None,
        "fragment": unquote(fragment),
        "query": "",
    }
    match = _SCHEME.match(rest)
    if rest.startswith(":"):
        raise _URLError("missing protocol scheme")
    if match and rest[match.end() : match.end() + 1] == ":":
        parts["scheme"], rest = match.group(0).lower(), rest[match.end() + 1 :]
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest, _, parts["query"] = rest.partition("?")
    if not rest.startswith("/") and parts["scheme"]:
        return parts  # opaque URL: no host
    if not parts["scheme"] and ":" in rest.split("/", 1)[0]:
        raise _URLError("first path segment in URL cannot contain colon")
    if rest.startswith("//"):
        authority, _, rest = rest[2:].partition("/")
        parts["user"], parts["host"] = _parse_authority(authority)
    _check_escapes(rest)
    return parts


def validate_webhook_url(path: Path, url: str, force_https: bool) -> ErrorList:
    """ValidateWebhookURL."""
    try:
        parts = parse_url(url)
    except _URLError as err:
        return [field.required(path, f'url must be a valid URL: parse "{url}": {err}{_FORM}')]
    errs: ErrorList = []
    if force_https and parts["scheme"] != "https":
        errs.append(field.invalid(path, parts["scheme"], "'https' is the only allowed URL scheme" + _FORM))
    if not parts["host"]:
        errs.append(field.invalid(path, parts["host"], "host must be specified" + _FORM))
    if parts["user"] is not None:
        errs.append(field.invalid(path, parts["user"], "user information is not permitted in the URL"))
    if parts["fragment"]:
        errs.append(field.invalid(path, parts["fragment"], "fragments are not permitted in the URL"))
    if parts["query"]:
        errs.append(field.invalid(path, parts["query"], "query parameters are not permitted in the URL"))
    return errs


def validate_webhook_service(path: Path, service: dict[str, Any]) -> ErrorList:
    """ValidateWebhookService (the port is the internal int32: 0 when unset)."""
    errs: ErrorList = []
    if not service.get("name"):
        errs.append(field.required(path.child("name"), ""))
    if not service.get("namespace"):
        errs.append(field.required(path.child("namespace"), ""))
    port = service.get("port")
    port = port if isinstance(port, int) and not isinstance(port, bool) else 0
    if msgs := is_valid_port_num(port):
        errs.append(field.invalid(path.child("port"), port, "port is not valid: " + ", ".join(msgs)))
    url_path = service.get("path")
    if isinstance(url_path, str):
        errs += _validate_service_path(path.child("path"), url_path)
    return errs


def _validate_service_path(path: Path, url_path: str) -> ErrorList:
    if url_path in ("", "/"):
        return []
    if url_path == "//":
        return [field.invalid(path, url_path, "segment[0] may not be empty")]
    errs: ErrorList = []
    if not url_path.startswith("/"):
        errs.append(field.invalid(path, url_path, "must start with a '/'"))
    for i, step in enumerate(url_path[1:].removesuffix("/").split("/")):
        if not step:
            errs.append(field.invalid(path, url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [field.invalid(path, url_path, f"segment[{i}]: {m}") for m in is_dns1123_subdomain(step)]
    return errs


def ca_bundle_bytes(ca_bundle: Any) -> bytes:
    """caBundle is []byte: base64 in JSON."""
    if isinstance(ca_bundle, bytes):
        return ca_bundle
    if not isinstance(ca_bundle, str):
        return b""
    try:
        return base64.b64decode(ca_bundle, validate=True)
    except (binascii.Error, ValueError):
        return ca_bundle.encode()


def ca_bundle_error(data: bytes) -> str | None:
    """Why transport.TLSConfigFor rejects data as CA data (AppendCertsFromPEM + createErrorParsingCAData)."""
    if not data:
        return None
    rest = data
    first_error: str | None = None
    while rest:
        block, rest = pem.decode(rest)
        if block is None:
            first_error = first_error or "unable to parse bytes as PEM block"
            break
        if block.type != "CERTIFICATE" or block.headers:
            continue
        try:
            x509.load_der_x509_certificate(block.data)
            return None  # one good certificate is enough for the pool
        except ValueError:
            first_error = first_error or "failed to parse certificate: x509: malformed certificate"
    return "unable to load root certificates: " + (first_error or "no valid certificate authority data seen")


def validate_ca_bundle(path: Path, ca_bundle: Any) -> ErrorList:
    """ValidateCABundle."""
    message = ca_bundle_error(ca_bundle_bytes(ca_bundle))
    return [field.invalid(path, ca_bundle, message)] if message else []
