"""The issuer's keys (go-oidc's RemoteKeySet): the discovery document names the JWKS URL; the key set is
fetched then, and again when a token names a key it does not hold, at most once per `min_refresh` so a
flood of tokens with made-up key IDs cannot make the server hammer the issuer."""

from __future__ import annotations

import asyncio
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from ...lazyimport import lazy_import
from ...serviceaccount.jwt import TokenFormatError, b64url_decode

if TYPE_CHECKING:
    import aiohttp
else:
    aiohttp = lazy_import("aiohttp")

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
FETCH_TIMEOUT = 30.0  # seconds, the http.Client timeout upstream gives the issuer's client
MAX_DOCUMENT_BYTES = 1 << 20  # a discovery document or key set larger than this is refused
DEFAULT_MIN_REFRESH = 1.0  # seconds between two fetches of the key set caused by unknown key IDs
HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
CURVES = {"P-256": (ec.SECP256R1, 32), "P-384": (ec.SECP384R1, 48), "P-521": (ec.SECP521R1, 66)}
ALL_SIGNING_ALGS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")


class FetchError(Exception):
    pass


@dataclass(frozen=True)
class JWK:
    kid: str
    key: PublicKey
    alg: str = ""


def parse_jwks(document: Any) -> list[JWK]:
    """The usable signing keys of a JWK Set; keys of other types or for encryption are skipped."""
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise FetchError("oidc: failed to decode keys: keys is not a list")
    keys: list[JWK] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = _public_key(entry)
        except (TokenFormatError, ValueError, TypeError):
            continue
        if key is not None:
            keys.append(JWK(str(entry.get("kid") or ""), key, str(entry.get("alg") or "")))
    return keys


def _int(entry: dict[str, Any], name: str) -> int:
    return int.from_bytes(b64url_decode(str(entry[name])), "big")


def _public_key(entry: dict[str, Any]) -> PublicKey | None:
    if entry.get("kty") == "RSA":
        return rsa.RSAPublicNumbers(_int(entry, "e"), _int(entry, "n")).public_key()
    if entry.get("kty") == "EC" and entry.get("crv") in CURVES:
        curve, _ = CURVES[entry["crv"]]
        return ec.EllipticCurvePublicNumbers(_int(entry, "x"), _int(entry, "y"), curve()).public_key()
    return None


def verify_signature(key: PublicKey, alg: str, data: bytes, signature: bytes) -> bool:
    """Whether `signature` over `data` is `key`'s with `alg` (RS*, PS*, ES* of RFC 7518)."""
    digest = HASHES.get(alg[2:])
    if digest is None:
        return False
    try:
        if isinstance(key, rsa.RSAPublicKey) and alg[:2] in ("RS", "PS"):
            pad: padding.AsymmetricPadding = padding.PKCS1v15() if alg[:2] == "RS" else padding.PSS(
                padding.MGF1(digest()), digest().digest_size)
            key.verify(signature, data, pad, digest())
            return True
        if isinstance(key, ec.EllipticCurvePublicKey) and alg[:2] == "ES":
            size = (key.curve.key_size + 7) // 8
            if len(signature) != 2 * size:
                return False
            r, s = int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
            key.verify(encode_dss_signature(r, s), data, ec.ECDSA(digest()))
            return True
    except InvalidSignature:
        return False
    return False


def tls_context(ca_pem: str) -> ssl.SSLContext:
    """Trusts `ca_pem` when given, else the host's roots (--oidc-ca-file / certificateAuthority)."""
    return ssl.create_default_context(cadata=ca_pem) if ca_pem else ssl.create_default_context()


async def fetch_json(url: str, context: ssl.SSLContext) -> Any:
    """GET a JSON document, bounded in time and size; raises FetchError."""
    try:
        timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url, ssl=context) as resp:
            body = await resp.content.read(MAX_DOCUMENT_BYTES + 1)
            if len(body) > MAX_DOCUMENT_BYTES:
                raise FetchError(f"response from {url} is larger than {MAX_DOCUMENT_BYTES} bytes")
            if resp.status != 200:
                raise FetchError(f"{resp.status} {resp.reason}: {body[:200].decode(errors='replace')}")
    except (TimeoutError, aiohttp.ClientError, OSError) as err:
        raise FetchError(f"Get {url!r}: {err or type(err).__name__}") from None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as err:
        raise FetchError(f"failed to decode response from {url}: {err}") from None


class RemoteKeySet:
    """The keys at a JWKS URL, refreshed on an unknown key ID (bounded by `min_refresh`)."""

    def __init__(self, jwks_url: str, context: ssl.SSLContext, min_refresh: float = DEFAULT_MIN_REFRESH):
        self.jwks_url = jwks_url
        self.context = context
        self.min_refresh = min_refresh
        self._keys: list[JWK] = []
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()

    async def keys_for(self, kid: str) -> list[JWK]:
        """The keys that may have signed a token naming `kid` (all of them when it names none)."""
        found = self._matching(kid)
        if found:
            return found
        async with self._lock:  # one fetch at a time; the others see its result
            found = self._matching(kid)
            if not found and time.monotonic() - self._fetched_at >= self.min_refresh:
                self._fetched_at = time.monotonic()
                self._keys = parse_jwks(await fetch_json(self.jwks_url, self.context))
                found = self._matching(kid)
        return found

    def _matching(self, kid: str) -> list[JWK]:
        return [k for k in self._keys if not kid or k.kid == kid]
