"""Secure serving flags (k8s.io/apiserver/pkg/server/options/serving.go).

Difference from kube-apiserver: --bind-address defaults to 127.0.0.1 (not 0.0.0.0) so that starting the
server with no flags on a laptop does not expose it to the network; --secure-port 0 is an ephemeral port
(kube-apiserver refuses it), so that tests can start servers side by side.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
from collections.abc import Iterable
from dataclasses import dataclass, field

from kube_apiserver.apimachinery.gostrconv import quote
from kube_apiserver.cli.flagset import FlagSet
from kube_apiserver.server import certs

DEFAULT_BIND_ADDRESS = "127.0.0.1"
DEFAULT_SECURE_PORT = 6443
PAIR_NAME = "apiserver"

# --tls-min-version values (Go crypto/tls constant names) and their Python equivalents.
TLS_VERSIONS: dict[str, ssl.TLSVersion] = {
    "VersionTLS10": ssl.TLSVersion.TLSv1,
    "VersionTLS11": ssl.TLSVersion.TLSv1_1,
    "VersionTLS12": ssl.TLSVersion.TLSv1_2,
    "VersionTLS13": ssl.TLSVersion.TLSv1_3,
}
DEFAULT_TLS_VERSION = "VersionTLS12"  # cliflag.DefaultTLSVersion

# --tls-cipher-suites values (Go crypto/tls names: tls.CipherSuites() and tls.InsecureCipherSuites(), plus
# the two legacy ChaCha20 names component-base keeps) and their OpenSSL names. TLS 1.3 suites are not
# configurable, in Go as in OpenSSL: they are accepted and always enabled (None).
SECURE_CIPHER_SUITES: dict[str, str | None] = {
    "TLS_AES_128_GCM_SHA256": None,
    "TLS_AES_256_GCM_SHA384": None,
    "TLS_CHACHA20_POLY1305_SHA256": None,
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
}
INSECURE_CIPHER_SUITES: dict[str, str | None] = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
}
CIPHER_SUITES = {**SECURE_CIPHER_SUITES, **INSECURE_CIPHER_SUITES}


@dataclass(frozen=True)
class TLSSettings:
    """What --tls-min-version and --tls-cipher-suites ask of the server's SSL context."""

    minimum_version: ssl.TLSVersion
    ciphers: str  # OpenSSL cipher list for TLS 1.2 and below; "" keeps the server's default


def tls_settings(min_version: str, cipher_suites: list[str]) -> TLSSettings:
    """The settings of valid flags (validate() reports invalid ones first). Suites that are all TLS 1.3
    leave no TLS 1.2 suite, so TLS 1.2 handshakes fail, as they do in Go: the minimum becomes 1.3."""
    minimum = TLS_VERSIONS[min_version or DEFAULT_TLS_VERSION]
    names = [CIPHER_SUITES[name] for name in cipher_suites]
    openssl = list(dict.fromkeys(name for name in names if name))
    if cipher_suites and not openssl:
        minimum = ssl.TLSVersion.TLSv1_3
    return TLSSettings(minimum, ":".join(openssl))


def is_unspecified(address: str | None) -> bool:
    """True for a blank, 0.0.0.0 or :: address (listen on every interface)."""
    return not address or ipaddress.ip_address(address).is_unspecified


@dataclass
class SecureServingOptions:
    bind_address: str | None = DEFAULT_BIND_ADDRESS
    bind_port: int = DEFAULT_SECURE_PORT
    cert_dir: str = ""
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    tls_min_version: str = ""
    tls_cipher_suites: list[str] = field(default_factory=list)
    # --tls-sni-cert-key: (cert file, key file, domain patterns; none = the certificate's names)
    sni_cert_keys: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)
    permit_port_sharing: bool = False
    # Not a flag: the CA clients should trust (the generated CA, or --tls-cert-file itself).
    ca_file: str = ""

    def add_flags(self, fs: FlagSet) -> None:
        fs.ip_var(self, "bind_address", "bind-address", _BIND_ADDRESS_HELP)
        fs.int_var(self, "bind_port", "secure-port", _SECURE_PORT_HELP)
        fs.string_var(self, "cert_dir", "cert-dir", _CERT_DIR_HELP)
        fs.bool_var(self, "permit_port_sharing", "permit-port-sharing", _PERMIT_PORT_SHARING_HELP)
        fs.string_var(self, "tls_cert_file", "tls-cert-file", _TLS_CERT_FILE_HELP)
        fs.string_var(
            self,
            "tls_private_key_file",
            "tls-private-key-file",
            "File containing the default x509 private key matching --tls-cert-file.",
        )
        fs.string_slice_var(self, "tls_cipher_suites", "tls-cipher-suites", _CIPHER_SUITES_HELP)
        fs.named_cert_key_var(self, "sni_cert_keys", "tls-sni-cert-key", _SNI_HELP)
        fs.string_var(
            self,
            "tls_min_version",
            "tls-min-version",
            "Minimum TLS version supported. Possible values: " + ", ".join(TLS_VERSIONS),
        )

    def complete(self, data_dir: str) -> None:
        if not self.cert_dir:
            self.cert_dir = os.path.join(data_dir, "pki")
        if self.tls_cert_file and not self.ca_file:
            self.ca_file = self.tls_cert_file

    def maybe_default_with_self_signed_certs(
        self, alternate_dns: Iterable[str], alternate_ips: Iterable[str]
    ) -> None:
        """Generates (or reuses) a self-signed serving certificate when none was given; raises OSError."""
        if self.tls_cert_file or self.tls_private_key_file:
            return
        generated = certs.ensure_self_signed_serving_certs(self.cert_dir, alternate_dns, alternate_ips)
        self.tls_cert_file = generated.cert_file
        self.tls_private_key_file = generated.key_file
        self.ca_file = generated.ca_file

    def tls(self) -> TLSSettings:
        return tls_settings(self.tls_min_version, self.tls_cipher_suites)

    def validate(self) -> list[str]:
        errors: list[str] = []
        # 0 (an ephemeral port the kernel picks) is accepted, unlike kube-apiserver: test harnesses start
        # servers side by side without racing for a free port (see _SECURE_PORT_HELP).
        if not 0 <= self.bind_port <= 65535:
            errors.append(
                f"--secure-port {self.bind_port} must be between 1 and 65535, inclusive. "
                "It cannot be turned off with 0"
            )
        if self.tls_min_version and self.tls_min_version not in TLS_VERSIONS:
            errors.append(f"unknown tls version {quote(self.tls_min_version)}")
        unknown = next((name for name in self.tls_cipher_suites if name not in CIPHER_SUITES), None)
        if unknown is not None:
            errors.append(f"Cipher suite {unknown} not supported or doesn't exist")
        errors.extend(self._validate_key_pair())
        for cert, key, _ in self.sni_cert_keys:
            error = certs.key_pair_error(cert, key)
            if error:
                errors.append(error)
        return errors

    def _validate_key_pair(self) -> list[str]:
        cert, key = self.tls_cert_file, self.tls_private_key_file
        if cert and not key:
            return ["--tls-private-key-file is required when --tls-cert-file is set"]
        if key and not cert:
            return ["--tls-cert-file is required when --tls-private-key-file is set"]
        error = certs.key_pair_error(cert, key) if cert else None
        return [error] if error else []


_SNI_HELP = (
    "A pair of x509 certificate and private key file paths, optionally suffixed with a list of domain patterns "
    "which are fully qualified domain names, possibly with prefixed wildcard segments. The domain patterns also "
    "allow IP addresses, but IPs should only be used if the apiserver has visibility to the IP address requested "
    "by a client. If no domain patterns are provided, the names of the certificate are extracted. Non-wildcard "
    "matches trump over wildcard matches, explicit domain patterns trump over extracted names. For multiple "
    "key/certificate pairs, use the --tls-sni-cert-key multiple times. Examples: \"example.crt,example.key\" or "
    "\"foo.crt,foo.key:*.foo.com,foo.com\"."
)
_BIND_ADDRESS_HELP = (
    "The IP address on which to listen for the --secure-port port. The associated interface(s) must be "
    "reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address "
    "(0.0.0.0 or ::), all interfaces and IP address families will be used. Unlike kube-apiserver "
    "(default 0.0.0.0), this server only listens on the loopback address unless told otherwise."
)
_SECURE_PORT_HELP = (
    "The port on which to serve HTTPS with authentication and authorization. Unlike kube-apiserver, 0 serves on "
    'an ephemeral port, shown in the "Serving securely on" log line and in the admin kubeconfig that '
    "--data-dir holds once the port is bound. It cannot be switched off with 0."
)
_PERMIT_PORT_SHARING_HELP = (
    "If true, SO_REUSEPORT will be used when binding the port, which allows more than one instance to bind "
    "on the same address and port. [default=false]"
)
_CERT_DIR_HELP = (
    "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are "
    "provided, this flag will be ignored. Defaults to <data-dir>/pki."
)
_TLS_CERT_FILE_HELP = (
    "File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server "
    "cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not provided, "
    "a self-signed certificate and key are generated for the public address and saved to the directory "
    "specified by --cert-dir."
)
_CIPHER_SUITES_HELP = (
    "Comma-separated list of cipher suites for the server. If omitted, the default Go cipher suites will be "
    "used. \nPreferred values: "
    + ", ".join(sorted(SECURE_CIPHER_SUITES))
    + ". \nInsecure values: "
    + ", ".join(sorted(INSECURE_CIPHER_SUITES))
    + "."
)
