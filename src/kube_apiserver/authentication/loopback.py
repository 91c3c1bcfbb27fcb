"""The loopback token (genericapiserver AuthorizeClientBearerToken): a bearer token made anew at each start,
known to this server only, that authenticates the server's own client as system:apiserver in
system:masters (so it is authorized by the privileged-group rule, whatever the authorization modes)."""

from __future__ import annotations

import uuid

from ..registry.context import UserInfo
from .token_file import StaticTokenAuthenticator

APISERVER_USER = "system:apiserver"  # user.APIServerUser
LOOPBACK_GROUPS = ("system:authenticated", "system:masters")


def new_loopback_token() -> str:
    """A random token per server start: another server's (or an earlier start's) is refused."""
    return str(uuid.uuid4())


def loopback_authenticator(token: str, api_audiences: tuple[str, ...] = ()) -> StaticTokenAuthenticator:
    """The token authenticator asked before every other one; its uid is random per start too."""
    user = UserInfo(APISERVER_USER, str(uuid.uuid4()), LOOPBACK_GROUPS)
    return StaticTokenAuthenticator({token: user}, api_audiences)
