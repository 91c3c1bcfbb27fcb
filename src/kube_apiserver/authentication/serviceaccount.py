"""Service account bearer tokens (pkg/serviceaccount/jwt.go JWTTokenAuthenticator): a JWT naming one of
our issuers, signed by one of the verifying keys, for one of the API audiences, whose service account
(and bound pod, secret or node) still exists with the claimed uid."""

from __future__ import annotations

import time
from typing import Any

from ..registry.context import UserInfo
from ..serviceaccount import claims as sa_claims
from ..serviceaccount import jwt
from ..serviceaccount.issuer import TokenConfig
from .interfaces import AuthenticationError


def _audiences(value: Any) -> list[str]:
    """jwt.Audience: a string or a list of strings."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    if value is None:
        return []
    raise AuthenticationError("square/go-jose/jwt: expected string or array value to unmarshal to Audience")


class ServiceAccountTokenAuthenticator:
    def __init__(self, config: TokenConfig, get: sa_claims.ObjectGetter):
        self.issuers = frozenset(config.issuers)
        self.keys = config.public_keys
        self.api_audiences = config.api_audiences
        self.get = get

    def _parse(self, token: str) -> jwt.ParsedToken | None:
        """hasCorrectIssuer: a JWT whose (unverified) issuer is ours; others are not ours to judge."""
        if token.strip().startswith("{"):
            return None
        try:
            parsed = jwt.parse(token)
        except jwt.TokenFormatError:
            return None
        return parsed if parsed.claims.get("iss") in self.issuers else None

    def _check_audiences(self, claims: sa_claims.Claims, targets: list[str]) -> None:
        token_audiences = _audiences(claims.get("aud")) or targets
        if targets and not set(token_audiences) & set(targets):
            raise AuthenticationError(f"token audiences {_go_list(token_audiences)} is invalid for the target "
                                      f"audiences {_go_list(targets)}")

    def token_audiences(self, token: str) -> list[str] | None:
        """The audiences a token of ours names (None for a token not ours)."""
        parsed = self._parse(token)
        return None if parsed is None else _audiences(parsed.claims.get("aud"))

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        parsed = self._parse(token)
        if parsed is None:
            return None
        if not parsed.verified_by(self.keys):
            raise AuthenticationError("square/go-jose: error in cryptographic primitive")
        self._check_audiences(parsed.claims, list(audiences) or self.api_audiences)
        try:
            info = await sa_claims.validate(parsed.claims, self.get, time.time())
        except sa_claims.ClaimsError as err:
            raise AuthenticationError(str(err)) from None
        return info.user_info()


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(f'"{item}"' for item in items) + "]"
