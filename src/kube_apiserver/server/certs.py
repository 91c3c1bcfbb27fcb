"""Self-signed serving certificates, like kube-apiserver's MaybeDefaultWithSelfSignedCerts.

`ensure_self_signed_serving_certs` keeps a private CA (`ca.crt`/`ca.key`, 10 years) and a serving
certificate signed by it (`apiserver.crt`/`apiserver.key`, 1 year; the .crt holds the chain: serving
certificate then CA, as k8s writes it) in the cert directory. Both are reused across restarts while
valid; the serving certificate is re-issued when it expires within 30 days, when it no longer covers
the required subject alternative names, or when the CA changed. Keys are ECDSA P-256, files mode 0600.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kube_apiserver import logs
from kube_apiserver.cli.gofile import read_bytes, write_file_atomic

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
PrivateKey = ec.EllipticCurvePrivateKey

BASE_DNS_NAMES = (
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    "localhost",
)
BASE_IPS = ("127.0.0.1",)

CA_VALIDITY = datetime.timedelta(days=3650)
SERVING_VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=30)
BACKDATE = datetime.timedelta(hours=1)  # tolerate clock skew, like client-go's certutil

CA_CERT, CA_KEY = "ca.crt", "ca.key"
SERVING_CERT, SERVING_KEY = "apiserver.crt", "apiserver.key"


@dataclass(frozen=True)
class ServingCerts:
    cert_file: str
    key_file: str
    ca_file: str


@dataclass(frozen=True)
class _Pair:
    cert: x509.Certificate
    key: PrivateKey


def ensure_self_signed_serving_certs(
    cert_dir: str, alternate_dns: Iterable[str], alternate_ips: Iterable[str]
) -> ServingCerts:
    """Creates or reuses the CA and serving certificate in `cert_dir`; returns their paths."""
    os.makedirs(cert_dir, mode=0o700, exist_ok=True)
    paths = {name: os.path.join(cert_dir, name) for name in (CA_CERT, CA_KEY, SERVING_CERT, SERVING_KEY)}
    dns = list(dict.fromkeys([*BASE_DNS_NAMES, *alternate_dns]))
    ips = list(dict.fromkeys(ipaddress.ip_address(ip) for ip in [*BASE_IPS, *alternate_ips]))
    ca = _reusable_ca(paths[CA_CERT], paths[CA_KEY]) or _create_ca(paths[CA_CERT], paths[CA_KEY])
    if not _reusable_serving(paths[SERVING_CERT], paths[SERVING_KEY], ca, dns, ips):
        dns, ips = _with_previous_names(paths[SERVING_CERT], paths[SERVING_KEY], ca, dns, ips)
        _create_serving(paths[SERVING_CERT], paths[SERVING_KEY], ca, dns, ips)
        logs.info("Generated self-signed cert (%s, %s)", paths[SERVING_CERT], paths[SERVING_KEY])
    return ServingCerts(paths[SERVING_CERT], paths[SERVING_KEY], paths[CA_CERT])


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _load_pair(cert_path: str, key_path: str) -> _Pair | None:
    """The first certificate of `cert_path` with its key, or None if missing/unparsable/mismatched."""
    try:
        cert = x509.load_pem_x509_certificates(read_bytes(cert_path))[0]
        key = serialization.load_pem_private_key(read_bytes(key_path), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, PrivateKey) or not public_keys_match(cert, key):
        return None
    return _Pair(cert, key)


def public_keys_match(cert: x509.Certificate, key: object) -> bool:
    public = getattr(key, "public_key", None)
    if public is None:
        return False
    fmt = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return bool(cert.public_key().public_bytes(*fmt) == public().public_bytes(*fmt))


def _valid_for(cert: x509.Certificate, remaining: datetime.timedelta) -> bool:
    now = _now()
    return cert.not_valid_before_utc <= now and now + remaining < cert.not_valid_after_utc


def _reusable_ca(cert_path: str, key_path: str) -> _Pair | None:
    pair = _load_pair(cert_path, key_path)
    if pair is None or not _valid_for(pair.cert, SERVING_VALIDITY):
        return None
    return pair


def _covers(cert: x509.Certificate, dns: list[str], ips: list[IPAddress]) -> bool:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return set(dns) <= set(san.get_values_for_type(x509.DNSName)) and set(ips) <= set(
        san.get_values_for_type(x509.IPAddress)
    )


def _with_previous_names(
    cert_path: str, key_path: str, ca: _Pair, dns: list[str], ips: list[IPAddress]
) -> tuple[list[str], list[IPAddress]]:
    """A re-issued certificate keeps the names of the one it replaces when the same CA signed it: replicas
    sharing a data directory with different advertise addresses converge on one certificate covering all."""
    pair = _load_pair(cert_path, key_path)
    if pair is None or not _signed_by(pair.cert, ca.cert):
        return dns, ips
    try:
        san = pair.cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return dns, ips
    return (list(dict.fromkeys([*dns, *san.get_values_for_type(x509.DNSName)])),
            list(dict.fromkeys([*ips, *san.get_values_for_type(x509.IPAddress)])))


def _signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _reusable_serving(cert_path: str, key_path: str, ca: _Pair, dns: list[str], ips: list[IPAddress]) -> bool:
    pair = _load_pair(cert_path, key_path)
    return (
        pair is not None
        and _valid_for(pair.cert, RENEW_BEFORE)
        and _covers(pair.cert, dns, ips)
        and _signed_by(pair.cert, ca.cert)
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _ca_certificate(key: PrivateKey) -> x509.Certificate:
    now, name = _now(), _name(f"kube-apiserver-ca@{int(time.time())}")
    usage = x509.KeyUsage(True, False, True, False, False, True, False, False, False)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )


def _serving_certificate(
    key: PrivateKey, ca: _Pair, dns: list[str], ips: list[IPAddress]
) -> x509.Certificate:
    now = _now()
    usage = x509.KeyUsage(True, False, True, False, False, False, False, False, False)
    san = x509.SubjectAlternativeName([*map(x509.DNSName, dns), *map(x509.IPAddress, ips)])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca.key.public_key())
    return (
        x509.CertificateBuilder()
        .subject_name(_name(f"kube-apiserver@{int(time.time())}"))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + SERVING_VALIDITY, ca.cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .add_extension(san, critical=False)
        .sign(ca.key, hashes.SHA256())
    )


def _cert_pem(*certs: x509.Certificate) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _create_ca(cert_path: str, key_path: str) -> _Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _ca_certificate(key)
    write_file_atomic(key_path, _key_pem(key), 0o600)
    write_file_atomic(cert_path, _cert_pem(cert), 0o644)
    return _Pair(cert, key)


def _create_serving(cert_path: str, key_path: str, ca: _Pair, dns: list[str], ips: list[IPAddress]) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _serving_certificate(key, ca, dns, ips)
    write_file_atomic(key_path, _key_pem(key), 0o600)
    write_file_atomic(cert_path, _cert_pem(cert, ca.cert), 0o644)


def key_pair_error(cert_file: str, key_file: str) -> str | None:
    """Why a user-supplied serving cert/key pair can't be used (Go's crypto/tls wording), or None."""
    try:
        cert_pem, key_pem = read_bytes(cert_file), read_bytes(key_file)
    except OSError as err:
        return str(err)
    try:
        cert = x509.load_pem_x509_certificates(cert_pem)[0]
    except ValueError:
        return "tls: failed to find any PEM data in certificate input"
    if b"PRIVATE KEY-----" not in key_pem:
        return "tls: failed to find any PEM data in key input"
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        return "tls: failed to parse private key"
    if not public_keys_match(cert, key):
        return "tls: private key does not match public key"
    return None


def ca_bundle_error(path: str) -> str | None:
    """Why `path` is not a readable PEM bundle of CA certificates (client-go certutil wording), or None."""
    try:
        x509.load_pem_x509_certificates(read_bytes(path))
    except OSError as err:
        return str(err)
    except ValueError:
        return "data does not contain any valid RSA or ECDSA certificates"
    return None
