"""The listener's certificates (k8s dynamiccertificates): the serving pair, the SNI pairs of --tls-sni-cert-key and
the client CAs, read again when their files change, so a rotated certificate or CA bundle is served without a
restart. Each handshake picks its context in the SNI callback: the SNI pair whose names match the requested
server name (exact names before wildcards, explicit patterns before the certificate's own names), else the
serving pair; every context trusts the current client CAs."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import ssl
from dataclasses import dataclass

from cryptography import x509
from cryptography.x509.oid import NameOID

from ..apimachinery.filewatch import stamp

log = logging.getLogger("kube_apiserver.server")
POLL_SECONDS = 1.0  # how soon a changed file is noticed (upstream: fsnotify, and a re-read every minute)


@dataclass(frozen=True)
class SNICertKey:
    cert_file: str
    key_file: str
    names: tuple[str, ...] = ()  # explicit domain patterns; none: the certificate's DNS names and CN


@dataclass(frozen=True)
class TLSOptions:
    cert_file: str
    key_file: str
    sni: tuple[SNICertKey, ...] = ()
    client_ca_files: tuple[str, ...] = ()
    min_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    ciphers: str = ""

    def files(self) -> list[str]:
        return [self.cert_file, self.key_file, *(f for p in self.sni for f in (p.cert_file, p.key_file)),
                *self.client_ca_files]


class ServingCertificates:
    def __init__(self, options: TLSOptions, poll_seconds: float = POLL_SECONDS):
        self.options = options
        self.poll_seconds = poll_seconds
        self._stamps = self._stat()
        self.default, self._exact, self._wildcard = self._load()
        # The listener's own context: it only hands each handshake to the current one.
        self.listener = self.default
        self.listener.sni_callback = self._pick
        self._task: asyncio.Task[None] | None = None

    def _new_context(self, cert_file: str, key_file: str) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        context.minimum_version = self.options.min_version
        if self.options.ciphers:
            context.set_ciphers(self.options.ciphers)
        if self.options.client_ca_files:
            for ca_file in self.options.client_ca_files:
                context.load_verify_locations(ca_file)
            context.verify_mode = ssl.CERT_OPTIONAL
        return context

    def _load(self) -> tuple[ssl.SSLContext, dict[str, ssl.SSLContext], dict[str, ssl.SSLContext]]:
        default = self._new_context(self.options.cert_file, self.options.key_file)
        exact: dict[str, ssl.SSLContext] = {}
        wildcard: dict[str, ssl.SSLContext] = {}
        # Explicit patterns trump extracted names: the extracted ones go in first, to be overwritten.
        pairs = sorted(self.options.sni, key=lambda p: bool(p.names))
        for pair in pairs:
            context = self._new_context(pair.cert_file, pair.key_file)
            for name in pair.names or certificate_names(pair.cert_file):
                name = name.lower()
                if name.startswith("*."):
                    wildcard[name[2:]] = context
                else:
                    exact[name] = context
        return default, exact, wildcard

    def context_for(self, server_name: str | None) -> ssl.SSLContext:
        if server_name:
            name = server_name.lower().rstrip(".")
            context = self._exact.get(name)
            if context is None and "." in name:
                context = self._wildcard.get(name.split(".", 1)[1])
            if context is not None:
                return context
        return self.default

    def _pick(self, connection: ssl.SSLObject | ssl.SSLSocket, server_name: str | None,
              current: ssl.SSLContext) -> None:
        chosen = self.context_for(server_name)
        if chosen is not current:
            connection.context = chosen
        return None

    # ---- reloading ----

    def start(self) -> None:
        if self._task is None and self.poll_seconds > 0:
            self._task = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def _stat(self) -> dict[str, tuple[int, int, int] | None]:
        return {path: stamp(path) for path in self.options.files()}

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            self.reload_if_changed()

    def reload_if_changed(self) -> bool:
        stamps = self._stat()
        if stamps == self._stamps:
            return False
        self._stamps = stamps
        try:
            loaded = self._load()
        except (OSError, ssl.SSLError, ValueError) as err:  # a half-written file: kept as it was, tried again
            log.error("Failed to reload the serving certificates, keeping the ones loaded: %s", err)
            return False
        self.default, self._exact, self._wildcard = loaded
        log.info("Loaded a new serving certificate and key pair, SNI certificates and client CAs from %s",
                 ", ".join(sorted(set(self.options.files()))))
        return True


def certificate_names(cert_file: str) -> list[str]:
    """getCertificateNames: the DNS names (and IP addresses) of the leaf, or its CommonName when it has none."""
    with open(cert_file, "rb") as f:
        cert = x509.load_pem_x509_certificates(f.read())[0]
    names: list[str] = []
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names += san.get_values_for_type(x509.DNSName)
        names += [str(ip) for ip in san.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        pass
    if not names:
        common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        if common and _is_name(str(common[0].value)):
            names.append(str(common[0].value))
    return names


def _is_name(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return " " not in value
    return True

