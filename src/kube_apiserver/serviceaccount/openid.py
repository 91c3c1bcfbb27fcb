"""OpenID Connect discovery for the service account issuer (pkg/serviceaccount/openidmetadata.go and
pkg/routes/openidmetadata.go): the provider configuration and the JSON Web Key Set, pre-rendered."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import orjson
from cryptography.hazmat.primitives.asymmetric import rsa

from ..endpoints.http import Request, Response
from .jwt import b64url
from .keys import PublicKey, algorithm, key_id

OPENID_CONFIG_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
CACHE_CONTROL = "public, max-age=3600"  # overrides the global `private, no-cache`
JWKS_MEDIA_TYPE = "application/jwk-set+json"
CURVE_NAMES = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}


def _int_bytes(value: int, size: int = 0) -> bytes:
    return value.to_bytes(max(size, (value.bit_length() + 7) // 8) or 1, "big")


def jwk(key: PublicKey) -> dict[str, str]:
    """The key as go-jose's JSONWebKey marshals it: use, kty, kid, crv, alg, then the key material."""
    out = {"use": "sig", "kty": "RSA" if isinstance(key, rsa.RSAPublicKey) else "EC", "kid": key_id(key)}
    if isinstance(key, rsa.RSAPublicKey):
        numbers = key.public_numbers()
        return {**out, "alg": algorithm(key), "n": b64url(_int_bytes(numbers.n)), "e": b64url(_int_bytes(numbers.e))}
    point, size = key.public_numbers(), (key.curve.key_size + 7) // 8
    return {**out, "crv": CURVE_NAMES[key.curve.name], "alg": algorithm(key),
            "x": b64url(_int_bytes(point.x, size)), "y": b64url(_int_bytes(point.y, size))}


def issuer_error(issuer: str) -> str | None:
    """Why the issuer URL cannot have discovery documents (NewOpenIDMetadata), or None."""
    parts = urlsplit(issuer)
    if parts.scheme != "https":
        return f"issuer URL must use https scheme, got: {issuer}"
    if parts.query:
        return f"issuer URL may not include a query, got: {issuer}"
    if parts.fragment:
        return f"issuer URL may not include a fragment, got: {issuer}"
    return None


def configuration(issuer: str, jwks_uri: str, keys: list[PublicKey]) -> bytes:
    return orjson.dumps({"issuer": issuer, "jwks_uri": jwks_uri, "response_types_supported": ["id_token"],
                         "subject_types_supported": ["public"],
                         "id_token_signing_alg_values_supported": sorted({algorithm(k) for k in keys})})


def key_set(keys: list[PublicKey]) -> bytes:
    return orjson.dumps({"keys": [jwk(k) for k in keys]})


class OpenIDMetadataServer:
    """Serves both documents; jwks_uri defaults to https://<external address>/openid/v1/jwks, the
    address being known once the server listens."""

    def __init__(self, issuer: str, keys: list[PublicKey], external_address: Callable[[], str]):
        self.issuer = issuer
        self.keys = keys
        self.external_address = external_address
        self.keys_json = key_set(keys)
        self._config_json = b""

    async def serve_configuration(self, req: Request) -> Response:
        if not self._config_json:
            jwks_uri = f"https://{self.external_address()}{JWKS_PATH}"
            self._config_json = configuration(self.issuer, jwks_uri, self.keys)
        return Response(200, self._config_json, "application/json", [("cache-control", CACHE_CONTROL)])

    async def serve_keys(self, req: Request) -> Response:
        return Response(200, self.keys_json, JWKS_MEDIA_TYPE, [("cache-control", CACHE_CONTROL)])
