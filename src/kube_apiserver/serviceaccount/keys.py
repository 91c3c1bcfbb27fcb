"""Service account keys (client-go keyutil, pkg/serviceaccount/jwt.go): the private key that signs
tokens, the public keys that verify them, their JWS algorithm and key ID, and the key this server
generates when none is given (`<data-dir>/pki/sa.key`, RSA 2048 as kubeadm's, reused on restart)."""

from __future__ import annotations

import base64
import hashlib
import os

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kube_apiserver import logs
from kube_apiserver.cli.gofile import read_bytes, write_file_atomic

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
SIGNING_KEY = "sa.key"
CURVE_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
NO_PRIVATE_KEY = "data does not contain a valid RSA or ECDSA private key"
NO_PUBLIC_KEYS = "data does not contain any valid RSA or ECDSA public keys"


def algorithm(key: PublicKey) -> str:
    """The JWS algorithm a key signs with: RS256 for RSA, ES256/384/512 by the ECDSA curve."""
    if isinstance(key, rsa.RSAPublicKey):
        return "RS256"
    alg = CURVE_ALGORITHMS.get(key.curve.name)
    if alg is None:
        raise ValueError(f"unknown private key curve, must be 256, 384, or 521, got {key.curve.name}")
    return alg


def key_id(key: PublicKey) -> str:
    """keyIDFromPublicKey: the unpadded base64url SHA-256 of the key's DER SubjectPublicKeyInfo."""
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")


def _pem_blocks(data: bytes) -> list[bytes]:
    blocks, rest = [], data
    while b"-----BEGIN " in rest:
        start = rest.index(b"-----BEGIN ")
        end = rest.find(b"-----END ", start)
        if end < 0:
            break
        close = rest.find(b"-----", end + 9)
        if close < 0:
            break
        blocks.append(rest[start:close + 5])
        rest = rest[close + 5:]
    return blocks


# PEM block -> its key. A start reads the signing key file four times (complete, validate, the token
# generator, the verifying keys) and OpenSSL checks an RSA key on every load (~50 ms each).
_parsed: dict[bytes, PrivateKey | None] = {}


def _private_key(block: bytes) -> PrivateKey | None:
    if block not in _parsed:
        _parsed[block] = _load_private_key(block)
    return _parsed[block]


def _load_private_key(block: bytes) -> PrivateKey | None:
    try:
        # OpenSSL's own RSA check tests p and q for primality (~40 ms a key): _consistent checks the rest.
        key = serialization.load_pem_private_key(block, password=None, unsafe_skip_rsa_key_validation=True)
    except (ValueError, TypeError):
        return None
    if isinstance(key, rsa.RSAPrivateKey):
        return key if _consistent(key.private_numbers()) else None
    return key if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _consistent(k: rsa.RSAPrivateNumbers) -> bool:
    """n = p·q, e·d = 1 mod p-1 and q-1 (Go's rsa.PrivateKey.Validate), and the CRT values agree."""
    n, e = k.public_numbers.n, k.public_numbers.e
    return (k.p > 1 and k.q > 1 and k.p * k.q == n and e * k.d % (k.p - 1) == 1 and e * k.d % (k.q - 1) == 1
            and k.dmp1 == k.d % (k.p - 1) and k.dmq1 == k.d % (k.q - 1) and k.iqmp * k.q % k.p == 1)


def _public_key(block: bytes) -> PublicKey | None:
    if b"PRIVATE KEY-----" in block:
        private = _private_key(block)
        return private.public_key() if private is not None else None
    try:
        if b"CERTIFICATE-----" in block:
            key = x509.load_pem_x509_certificate(block).public_key()
        else:
            key = serialization.load_pem_public_key(block)
    except (ValueError, TypeError):
        return None
    return key if isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey) else None


def load_private_key(path: str) -> PrivateKey:
    """keyutil.PrivateKeyFromFile; raises OSError or ValueError with Go's wording."""
    for block in _pem_blocks(read_bytes(path)):
        key = _private_key(block)
        if key is not None:
            return key
    raise ValueError(NO_PRIVATE_KEY)


def load_public_keys(path: str) -> list[PublicKey]:
    """keyutil.PublicKeysFromFile: every public key, certificate or private key's public half."""
    keys = [key for key in map(_public_key, _pem_blocks(read_bytes(path))) if key is not None]
    if not keys:
        raise ValueError(NO_PUBLIC_KEYS)
    return keys


def ensure_signing_key(directory: str) -> str:
    """The path of a usable signing key in `directory`, generated (mode 0600) when missing or unreadable."""
    path = os.path.join(directory, SIGNING_KEY)
    try:
        load_private_key(path)
        return path
    except (OSError, ValueError):
        pass
    os.makedirs(directory, mode=0o700, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption())
    write_file_atomic(path, pem, 0o600)
    _parsed.update(dict.fromkeys(_pem_blocks(pem), key))  # read back right away: no need to parse it
    logs.info("Generated service account signing key %s", path)
    return path
