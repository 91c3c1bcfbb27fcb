"""Authenticators (k8s.io/apiserver/pkg/authentication): each says who a request is, or that it
cannot tell (None), or raises AuthenticationError when the credential it was given is bad."""

from __future__ import annotations

from typing import Protocol

from ..endpoints.http import Request
from ..registry.context import UserInfo


class AuthenticationError(Exception):
    pass


class RequestAuthenticator(Protocol):
    async def authenticate(self, req: Request) -> UserInfo | None: ...


class TokenAuthenticator(Protocol):
    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        """`audiences`: the ones the token must be good for (the API audiences when empty)."""
        ...
