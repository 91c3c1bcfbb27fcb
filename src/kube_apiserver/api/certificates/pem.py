"""PEM blocks as Go's encoding/pem decodes them, and the x509 checks CSR validation makes
(certificates.ParseCSR + CheckSignature, validateCertificate), with the cryptography package."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from ...apimachinery.field import go_quote

PEM_START, PEM_END, PEM_EOL = b"\n-----BEGIN ", b"\n-----END ", b"-----"
REQUEST_TYPE_ERROR = "PEM block type must be CERTIFICATE REQUEST"


@dataclass
class Block:
    type: str
    headers: dict[str, str] = field(default_factory=dict)
    data: bytes = b""


def _line(data: bytes) -> tuple[bytes, bytes]:
    """getLine: the first line without trailing spaces/tabs/CR, and the rest."""
    i = data.find(b"\n")
    line, rest = (data, b"") if i < 0 else (data[:i], data[i + 1:])
    return line.rstrip(b" \t\r"), rest


def _after_start(rest: bytes) -> bytes | None:
    if rest.startswith(PEM_START[1:]):
        return rest[len(PEM_START) - 1:]
    i = rest.find(PEM_START)
    return None if i < 0 else rest[i + len(PEM_START):]


def _headers(rest: bytes) -> tuple[dict[str, str], bytes] | None:
    headers: dict[str, str] = {}
    while True:
        if not rest:
            return None
        line, following = _line(rest)
        key, colon, value = line.partition(b":")
        if not colon:
            return headers, rest
        headers[key.strip().decode(errors="replace")] = value.strip().decode(errors="replace")
        rest = following


def _body(type_line: bytes, headers: dict[str, str], rest: bytes) -> tuple[bytes, bytes] | None:
    """The block's decoded bytes and what follows its END line; None when malformed."""
    if not headers and rest.startswith(PEM_END[1:]):
        end, trailer_at = 0, len(PEM_END) - 1
    else:
        end = rest.find(PEM_END)
        trailer_at = end + len(PEM_END)
    if end < 0:
        return None
    trailer = rest[trailer_at:trailer_at + len(type_line) + len(PEM_EOL)]
    after = rest[trailer_at + len(type_line) + len(PEM_EOL):]
    if len(trailer) < len(type_line) + len(PEM_EOL) or trailer != type_line + PEM_EOL or _line(after)[0]:
        return None
    encoded = rest[:end].translate(None, b" \t\r\n")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data, _line(rest[end + len(PEM_END) - 1:])[1]


def decode(data: bytes) -> tuple[Block | None, bytes]:
    """pem.Decode: the first well-formed block and the data after it (None and the input if none)."""
    rest: bytes | None = data
    while True:
        rest = _after_start(rest) if rest is not None else None
        if rest is None:
            return None, data
        type_line, rest = _line(rest)
        if not type_line.endswith(PEM_EOL):
            continue
        type_line = type_line[:-len(PEM_EOL)]
        parsed = _headers(rest)
        if parsed is None:
            return None, data
        headers, rest = parsed
        body = _body(type_line, headers, rest)
        if body is not None:
            return Block(type_line.decode(errors="replace"), headers, body[0]), body[1]


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
