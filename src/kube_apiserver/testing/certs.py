"""Throwaway certificate authorities for tests: a client CA whose certificates the server trusts
(--client-ca-file; CN is the user, O the groups) and serving certificates for webhooks (SANs 127.0.0.1, ::1 and
localhost). EC P-256 keys: generating one takes a millisecond."""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=7)
LOOPBACK_SANS = ("127.0.0.1", "::1", "localhost")


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
        ]
    )


def _pem_key(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


@dataclass
class CertificateAuthority:
    """A CA certificate and its key; `cert_pem` is what a server trusts (--client-ca-file, a caBundle)."""

    cert: x509.Certificate
    key: Any

    @classmethod
    def generate(cls, common_name: str) -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        return cls(cert, key)

    @classmethod
    def load(cls, cert_file: str, key_file: str) -> CertificateAuthority:
        with open(cert_file, "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        with open(key_file, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
        return cls(cert, key)

    @property
    def cert_pem(self) -> bytes:
        return _pem_cert(self.cert)

    def write(self, cert_file: str, key_file: str) -> None:
        _write_private(key_file, _pem_key(self.key))
        with open(cert_file, "wb") as f:
            f.write(self.cert_pem)

    def issue(
        self,
        common_name: str,
        organizations: tuple[str, ...] = (),
        *,
        client: bool = False,
        sans: tuple[str, ...] = (),
    ) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM): a client certificate (CN, O) or a serving one for `sans`."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organizations))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([_san(s) for s in sans]), critical=False
            )
        return _pem_cert(builder.sign(self.key, hashes.SHA256())), _pem_key(key)


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_pair(directory: str, stem: str, cert_pem: bytes, key_pem: bytes) -> tuple[str, str]:
    """<stem>.crt and <stem>.key in `directory` (the key readable by its owner only)."""
    os.makedirs(directory, exist_ok=True)
    cert_file, key_file = os.path.join(directory, f"{stem}.crt"), os.path.join(directory, f"{stem}.key")
    with open(cert_file, "wb") as f:
        f.write(cert_pem)
    _write_private(key_file, key_pem)
    return cert_file, key_file
