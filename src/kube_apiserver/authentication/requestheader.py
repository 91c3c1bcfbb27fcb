"""The front proxy's identity (--requestheader-*, k8s headerrequest and x509.Verifier): a client certificate
issued by the request-header CA, with a common name the allowed names hold, vouches for the user its headers
name (X-Remote-User, -Uid, -Group, -Extra-*)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import unquote

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import NameOID

from ..apimachinery.filewatch import FileWatch
from ..endpoints.http import Request
from ..registry.context import UserInfo
from .interfaces import AuthenticationError

UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"
# Repeated request headers reach us joined with ", " (endpoints/http.Request): split back on it.
LIST_SEPARATOR = ", "
_VERIFIED_CACHE = 1024
RELOAD_CHECK_SECONDS = 1.0  # how often the bundle's file is looked at (a stat), as the listener's are
log = logging.getLogger("kube_apiserver.authentication")


class IssuerCheck:
    """Whether a client certificate was issued by one of a bundle's CAs. The TLS layer verified the chain
    against every client CA this server trusts; an authenticator trusts only its own bundle's (the
    request-header CA's certificates must not log in through --client-ca-file, nor the reverse). Only
    certificates signed directly by a CA of the bundle are recognized."""

    def __init__(self, pem: bytes, path: str = ""):
        """`path`: the bundle's file, read again when it changes (as the serving side's client CAs are)."""
        self.authorities = x509.load_pem_x509_certificates(pem)
        self._verdicts: OrderedDict[bytes, x509.Certificate | None] = OrderedDict()
        self.watch = FileWatch(path, RELOAD_CHECK_SECONDS) if path else None

    @classmethod
    def from_file(cls, path: str) -> IssuerCheck:
        with open(path, "rb") as f:
            return cls(f.read(), path)

    def _reload_if_changed(self) -> None:
        if self.watch is None or not self.watch.changed():
            return
        try:
            with open(self.watch.path, "rb") as f:
                authorities = x509.load_pem_x509_certificates(f.read())
        except (OSError, ValueError) as err:  # a half-written file: the loaded bundle stays
            log.error("Failed to reload the client CA bundle %s, keeping the one loaded: %s", self.watch.path, err)
            return
        self.authorities = authorities
        self._verdicts.clear()

    def verified(self, der: bytes) -> x509.Certificate:
        """The certificate, or AuthenticationError as Go's Verify words it."""
        self._reload_if_changed()
        if der in self._verdicts:
            self._verdicts.move_to_end(der)
            cert = self._verdicts[der]
        else:
            cert = self._check(der)
            self._verdicts[der] = cert
            if len(self._verdicts) > _VERIFIED_CACHE:
                self._verdicts.popitem(last=False)
        if cert is None:
            raise AuthenticationError(UNKNOWN_AUTHORITY)
        now = datetime.now(UTC)
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            raise AuthenticationError("x509: certificate has expired or is not yet valid")
        return cert

    def _check(self, der: bytes) -> x509.Certificate | None:
        try:
            cert = x509.load_der_x509_certificate(der)
        except ValueError:
            return None
        for authority in self.authorities:
            try:
                cert.verify_directly_issued_by(authority)
            except (ValueError, TypeError, InvalidSignature):
                continue
            return cert
        return None


def common_name(cert: x509.Certificate) -> str:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


@dataclass
class RequestHeaderConfig:
    """What --requestheader-* configure (authenticatorfactory.RequestHeaderConfig)."""

    client_ca: bytes
    client_ca_file: str = ""  # read again when it changes
    allowed_names: list[str] = field(default_factory=list)
    username_headers: list[str] = field(default_factory=list)
    uid_headers: list[str] = field(default_factory=list)
    group_headers: list[str] = field(default_factory=list)
    extra_headers_prefixes: list[str] = field(default_factory=list)


class RequestHeaderAuthenticator:
    def __init__(self, config: RequestHeaderConfig):
        self.config = config
        self.issuer = IssuerCheck(config.client_ca, config.client_ca_file)
        self.allowed = frozenset(config.allowed_names)
        self.username_headers = [name.lower() for name in config.username_headers]
        self.uid_headers = [name.lower() for name in config.uid_headers]
        self.group_headers = [name.lower() for name in config.group_headers]
        self.extra_prefixes = [prefix.lower() for prefix in config.extra_headers_prefixes]

    async def authenticate(self, req: Request) -> UserInfo | None:
        if not req.client_cert:
            return None
        cert = self.issuer.verified(req.client_cert)
        if self.allowed and common_name(cert) not in self.allowed:
            raise AuthenticationError(f"x509: subject with cn={common_name(cert)} is not in the allowed list")
        headers = req.headers
        name = _first_value(headers, self.username_headers)
        if not name:
            return None
        uid = _first_value(headers, self.uid_headers)
        groups = tuple(value for header in self.group_headers
                       for value in headers.get(header, "").split(LIST_SEPARATOR) if value)
        extra = self._extra(headers)
        # What vouched for the user goes no further (an aggregated server, a proxied pod): the headers are
        # dropped once read, as upstream's authenticator deletes them.
        for header in list(headers):
            if header in self.username_headers or header in self.uid_headers or header in self.group_headers \
                    or any(header.startswith(prefix) for prefix in self.extra_prefixes):
                del headers[header]
        return UserInfo(name, uid, groups, extra)

    def _extra(self, headers: dict[str, str]) -> dict[str, list[str]]:
        extra: dict[str, list[str]] = {}
        for prefix in self.extra_prefixes:
            for header, value in headers.items():
                if header.startswith(prefix):
                    # url.PathUnescape of the lower-cased rest; kept as it is when malformed
                    key = _path_unescape(header[len(prefix):])
                    extra.setdefault(key, []).extend(value.split(LIST_SEPARATOR))
        return extra


def _first_value(headers: dict[str, str], names: list[str]) -> str:
    """headerValue: the first of the named headers that is set and not empty (its first value)."""
    for name in names:
        value = headers.get(name, "")
        if value:
            return value.split(LIST_SEPARATOR, 1)[0]
    return ""


def _path_unescape(key: str) -> str:
    index = 0
    while (index := key.find("%", index)) >= 0:
        if len(key) < index + 3 or any(c not in "0123456789abcdefABCDEF" for c in key[index + 1:index + 3]):
            return key
        index += 3
    return unquote(key, errors="surrogateescape")
