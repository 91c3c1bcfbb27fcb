"""A signing key and tokens for the OIDC unit tests, and a key set that needs no network."""

from __future__ import annotations

import time
from typing import Any

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from kube_apiserver.authentication.oidc import config as oidc_config
from kube_apiserver.authentication.oidc.authenticator import OIDCAuthenticator
from kube_apiserver.authentication.oidc.jwks import JWK
from kube_apiserver.serviceaccount.jwt import b64url, sign

ISSUER = "https://issuer.example.com"
AUDIENCE = "my-client"


class Signer:
    def __init__(self, kid: str = "key-1", alg: str = "RS256"):
        self.kid, self.alg = kid, alg
        self.key: Any = (rsa.generate_private_key(65537, 2048) if alg.startswith(("RS", "PS"))
                         else ec.generate_private_key(ec.SECP256R1()))

    def token(self, claims: dict[str, Any] | None = None, **overrides: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 600, **(claims or {})}
        body.update(overrides)
        body = {k: v for k, v in body.items() if v is not None}
        header = {"alg": self.alg, "kid": self.kid}
        signing_input = f"{b64url(orjson.dumps(header))}.{b64url(orjson.dumps(body))}".encode()
        if self.alg.startswith("PS"):
            pss = padding.PSS(padding.MGF1(hashes.SHA256()), hashes.SHA256().digest_size)
            signature = self.key.sign(signing_input, pss, hashes.SHA256())
        else:
            signature = sign(self.key, self.alg, signing_input)
        return f"{signing_input.decode()}.{b64url(signature)}"


class StaticKeys:
    def __init__(self, *signers: Signer):
        self.keys = [JWK(s.kid, s.key.public_key()) for s in signers]

    async def keys_for(self, kid: str) -> list[JWK]:
        return [k for k in self.keys if not kid or k.kid == kid]


def load_config(text: str, disallowed: list[str] | None = None) -> tuple[oidc_config.AuthenticationConfiguration,
                                                                         list[str]]:
    config = oidc_config.load(text.encode())
    return config, [str(e) for e in oidc_config.validate(config, disallowed or [])]


def authenticator(jwt_yaml: str, *signers: Signer, algs: tuple[str, ...] = ("RS256",)) -> OIDCAuthenticator:
    config, errors = load_config("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n"
                                 + jwt_yaml)
    assert not errors, errors
    return OIDCAuthenticator(config.jwt[0], algs, key_set=StaticKeys(*signers))  # type: ignore[arg-type]
