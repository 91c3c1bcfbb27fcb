"""Request authenticators: bearer tokens (from a union of token authenticators), anonymous (with the paths
it is allowed on), and their union."""

from __future__ import annotations

from collections.abc import Iterable

from ..apimachinery.field import aggregate_message
from ..endpoints.http import Request
from ..registry.context import ANONYMOUS, UserInfo
from .interfaces import AuthenticationError, RequestAuthenticator, TokenAuthenticator

AUTHENTICATED = "system:authenticated"
# What Kubernetes leaves open to everyone (the system:public-info-viewer role's paths).
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


class BearerTokenAuthenticator:
    def __init__(self, tokens: TokenAuthenticator):
        self.tokens = tokens

    async def authenticate(self, req: Request) -> UserInfo | None:
        header = req.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        token = token.strip()
        if not token:
            return None
        user = await self.tokens.authenticate_token(token)
        if user is None:
            raise AuthenticationError("invalid bearer token")
        return user


class UnionTokenAuthenticator:
    """Token authenticators in order: the first that knows the token wins; when none does, the
    failures of those that rejected it (k8s tokenunion)."""

    def __init__(self, authenticators: list[TokenAuthenticator]):
        self.authenticators = authenticators

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        failures: list[str] = []
        for authenticator in self.authenticators:
            try:
                user = await authenticator.authenticate_token(token, audiences)
            except AuthenticationError as err:
                failures.append(str(err))
                continue
            if user is not None:
                return user
        if failures:
            raise AuthenticationError(", ".join(failures))
        return None


class AnonymousAuthenticator:
    """Anonymous access, limited to `paths` when given (AuthenticationConfiguration anonymous.conditions)."""

    def __init__(self, paths: Iterable[str] | None = None):
        self.paths = frozenset(paths) if paths is not None else None

    async def authenticate(self, req: Request) -> UserInfo | None:
        if self.paths is not None and req.path not in self.paths:
            return None
        return ANONYMOUS


def with_authenticated_group(user: UserInfo) -> UserInfo:
    """Every authenticated user is in system:authenticated (k8s group.AuthenticatedGroupAdder)."""
    if AUTHENTICATED in user.groups or user.name == ANONYMOUS.name:
        return user
    return UserInfo(user.name, user.uid, (*user.groups, AUTHENTICATED), user.extra)


class UnionAuthenticator:
    """The first authenticator that knows the request wins; every authenticated user gets
    system:authenticated. One that fails does not stop the others (a front-proxy certificate fails the
    client-CA check and passes the request-header one); when none knows the request and one failed, the
    request fails, anonymous or not (union.New, then union.NewFailOnError with the anonymous one)."""

    def __init__(self, authenticators: list[RequestAuthenticator], anonymous: RequestAuthenticator | None):
        self.authenticators = authenticators
        self.anonymous = anonymous

    async def authenticate(self, req: Request) -> UserInfo | None:
        failures: list[str] = []
        for authenticator in self.authenticators:
            try:
                user = await authenticator.authenticate(req)
            except AuthenticationError as err:
                failures.append(str(err))
                continue
            if user is not None:
                return with_authenticated_group(user)
        if failures:
            raise AuthenticationError(aggregate_message(failures))
        if self.anonymous is not None:
            return await self.anonymous.authenticate(req)
        return None


__all__ = ["AuthenticationError", "BearerTokenAuthenticator", "AnonymousAuthenticator", "UnionAuthenticator",
           "UnionTokenAuthenticator", "PUBLIC_PATHS"]
