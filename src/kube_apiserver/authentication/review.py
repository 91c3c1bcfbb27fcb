"""TokenReview's question, "who is this token?", answered by the server's own token authenticators
(pkg/registry/authentication/tokenreview), for the audiences asked or the API audiences."""

from __future__ import annotations

from dataclasses import dataclass

from ..registry.context import UserInfo
from .interfaces import AuthenticationError, TokenAuthenticator
from .request import with_authenticated_group
from .serviceaccount import ServiceAccountTokenAuthenticator


@dataclass(frozen=True)
class TokenReviewResult:
    user: UserInfo | None
    audiences: list[str]
    error: str = ""


class TokenReviewer:
    def __init__(self, tokens: TokenAuthenticator, api_audiences: list[str],
                 service_accounts: ServiceAccountTokenAuthenticator | None = None):
        self.tokens = tokens
        self.api_audiences = api_audiences
        # Knows which audiences a service account token names (an audience-aware authenticator).
        self.service_accounts = service_accounts

    async def review(self, token: str, audiences: list[str]) -> TokenReviewResult:
        targets = audiences or self.api_audiences
        try:
            user = await self.tokens.authenticate_token(token, tuple(targets))
        except AuthenticationError as err:
            return TokenReviewResult(None, [], str(err))
        if user is None:
            return TokenReviewResult(None, [], "invalid bearer token")
        return TokenReviewResult(with_authenticated_group(user), self._matched(token, targets))

    def _matched(self, token: str, targets: list[str]) -> list[str]:
        """The audiences the token is good for among the targets: those it names, for an audience-aware
        token; the API audiences among them otherwise."""
        named = self.service_accounts.token_audiences(token) if self.service_accounts is not None else None
        if named:
            return [aud for aud in targets if aud in named]
        if not self.api_audiences:
            return list(targets)
        return [aud for aud in targets if aud in self.api_audiences]
