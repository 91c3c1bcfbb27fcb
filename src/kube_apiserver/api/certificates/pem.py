"""The x509 checks CSR validation makes (certificates.ParseCSR + CheckSignature, validateCertificate),
with the cryptography package, on PEM blocks decoded as Go decodes them."""

from __future__ import annotations

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from ...apimachinery.field import go_quote
from ...apimachinery.pem import Block, decode

__all__ = ["Block", "certificate_error", "decode", "request_error"]
REQUEST_TYPE_ERROR = "PEM block type must be CERTIFICATE REQUEST"


def _signature_error(csr: x509.CertificateSigningRequest) -> str | None:
    try:
        if csr.is_signature_valid:
            return None
        key = csr.public_key()
    except (UnsupportedAlgorithm, ValueError):
        return "x509: cannot verify signature: algorithm unimplemented"
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    return "x509: cannot verify signature: algorithm unimplemented"


def request_error(request: bytes) -> str | None:
    """Why `request` is not a PEM CERTIFICATE REQUEST with a valid self-signature (None if it is)."""
    block, _ = decode(request)
    if block is None or block.type != "CERTIFICATE REQUEST":
        return REQUEST_TYPE_ERROR
    try:
        csr = x509.load_der_x509_csr(block.data)
    except ValueError:
        return "x509: malformed certificate request"
    return _signature_error(csr)


def certificate_error(data: bytes) -> str | None:
    """validateCertificate: one or more CERTIFICATE blocks, no headers, each parsing as x509."""
    if not data:
        return None
    blocks = 0
    while True:
        block, data = decode(data)
        if block is None:
            break
        if block.type != "CERTIFICATE":
            return f"only CERTIFICATE PEM blocks are allowed, found {go_quote(block.type)}"
        if block.headers:
            return "no PEM block headers are permitted"
        blocks += 1
        try:
            x509.load_der_x509_certificate(block.data)
        except ValueError:
            return "x509: malformed certificate"
    return None if blocks else "must contain at least one CERTIFICATE PEM block"
