"""What the service account token issuer is configured with (kube-apiserver's ServiceAccount options,
completed): the issuers tokens may name, the API audiences, the signing key and the verifying keys."""

from __future__ import annotations

from dataclasses import dataclass

from .claims import EXPIRATION_EXTENSION_SECONDS
from .jwt import TokenGenerator
from .keys import PublicKey


@dataclass
class TokenConfig:
    # The first issuer signs; every one is accepted.
    issuers: list[str]
    api_audiences: list[str]
    public_keys: list[PublicKey]
    # None when no signing key is configured: no TokenRequest endpoint.
    generator: TokenGenerator | None = None
    max_expiration_seconds: int = 0
    extend_expiration: bool = True
    max_extended_expiration_seconds: int = EXPIRATION_EXTENSION_SECONDS

    @property
    def issuer(self) -> str:
        return self.issuers[0] if self.issuers else ""

    def is_kube_audiences(self, audiences: list[str]) -> bool:
        """isKubeAudiences: every requested audience is one of the API's own."""
        return set(audiences) <= set(self.api_audiences)
