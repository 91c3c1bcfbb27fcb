"""Compact JWS tokens as go-jose writes them for Kubernetes (pkg/serviceaccount/jwt.go): the header
{"alg","kid"}, the claims with sorted keys, an RS256 or ES256/384/512 signature."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from .keys import PrivateKey, PublicKey, algorithm, key_id

Claims = dict[str, Any]
HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


class TokenFormatError(ValueError):
    """Not a compact JWS with a JSON payload."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text: str) -> bytes:
    if "=" in text:
        raise TokenFormatError("padded base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as err:
        raise TokenFormatError(str(err)) from None


def _curve_size(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) -> int:
    return (key.curve.key_size + 7) // 8


def sign(key: PrivateKey, alg: str, data: bytes) -> bytes:
    digest = HASHES[alg[2:]]()
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PKCS1v15(), digest)
    r, s = decode_dss_signature(key.sign(data, ec.ECDSA(digest)))
    size = _curve_size(key)
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def verify(key: PublicKey, alg: str, data: bytes, signature: bytes) -> bool:
    """Whether `signature` over `data` was made by `key` with `alg` (which must be the key's own)."""
    try:
        if alg != algorithm(key):
            return False
    except ValueError:
        return False
    digest = HASHES[alg[2:]]()
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, data, padding.PKCS1v15(), digest)
            return True
        size = _curve_size(key)
        if len(signature) != 2 * size:
            return False
        r, s = int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
        key.verify(encode_dss_signature(r, s), data, ec.ECDSA(digest))
        return True
    except InvalidSignature:
        return False


class TokenGenerator:
    """JWTTokenGenerator: signs claims as `issuer` with the private key."""

    def __init__(self, issuer: str, key: PrivateKey):
        self.issuer = issuer
        self.key = key
        self.alg = algorithm(key.public_key())
        self.kid = key_id(key.public_key())

    def generate(self, claims: Claims) -> str:
        header = orjson.dumps({"alg": self.alg, "kid": self.kid})
        payload = orjson.dumps({**claims, "iss": self.issuer}, option=orjson.OPT_SORT_KEYS)
        signing_input = f"{b64url(header)}.{b64url(payload)}".encode()
        return f"{signing_input.decode()}.{b64url(sign(self.key, self.alg, signing_input))}"


@dataclass(frozen=True)
class ParsedToken:
    header: dict[str, Any]
    claims: Claims
    signing_input: bytes
    signature: bytes

    def verified_by(self, keys: list[PublicKey]) -> bool:
        alg = self.header.get("alg")
        return isinstance(alg, str) and any(verify(k, alg, self.signing_input, self.signature) for k in keys)


def _json_object(segment: str) -> dict[str, Any]:
    try:
        value = orjson.loads(b64url_decode(segment))
    except orjson.JSONDecodeError as err:
        raise TokenFormatError(str(err)) from None
    if not isinstance(value, dict):
        raise TokenFormatError("not a JSON object")
    return value


def parse(token: str) -> ParsedToken:
    """The parts of a compact JWS, unverified; raises TokenFormatError when it is not one."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenFormatError("compact JWS format must have three parts")
    header, claims = _json_object(parts[0]), _json_object(parts[1])
    return ParsedToken(header, claims, f"{parts[0]}.{parts[1]}".encode(), b64url_decode(parts[2]))
