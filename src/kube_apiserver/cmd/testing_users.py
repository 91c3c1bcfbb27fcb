"""/debug/testing/users (--enable-testing-endpoints): bearer tokens for made-up users and groups, so a test can
act as "alice" in the groups it names without a client certificate. The tokens live in this server only (a
static token authenticator added to its bearer tokens when testing endpoints are enabled, so TokenReview knows
them too) and are forgotten when it stops.

  POST   /debug/testing/users   {"name": "alice", "groups": ["dev"], "uid": "optional"}  -> 201 with "token"
  GET    /debug/testing/users   the users (without their tokens)
  DELETE /debug/testing/users   forget every testing user (their tokens stop working)"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

from ..apimachinery import errors, serializer
from ..authentication.request import BearerTokenAuthenticator, UnionAuthenticator, UnionTokenAuthenticator
from ..authentication.token_file import StaticTokenAuthenticator
from ..endpoints.http import Handler, Request, Response
from ..registry.context import UserInfo

if TYPE_CHECKING:
    from ..server.generic_api_server import GenericAPIServer
    from .server import ServerConfig

USERS_PATH = "/debug/testing/users"
MAX_USERS = 10_000  # bounded memory: a test suite that needs more forgets them between tests
MAX_BODY_BYTES = 64 << 10


def install_testing_users(config: ServerConfig, server: GenericAPIServer) -> None:
    tokens = StaticTokenAuthenticator({})
    _add_token_authenticator(config.generic.config.authenticator, tokens)
    server.handler.non_restful_mux.handle_unlisted(USERS_PATH, _users_handler(tokens))


def _add_token_authenticator(authenticator: Any, tokens: StaticTokenAuthenticator) -> None:
    """Behind the configured token authenticators of the bearer union, with the same implicit audiences as the
    static tokens already there (a static token is good for the API audiences only)."""
    assert isinstance(authenticator, UnionAuthenticator), "the server authenticates through a union"
    for candidate in authenticator.authenticators:
        if isinstance(candidate, BearerTokenAuthenticator) and isinstance(
            candidate.tokens, UnionTokenAuthenticator
        ):
            union = candidate.tokens
            static = [a for a in union.authenticators if isinstance(a, StaticTokenAuthenticator)]
            tokens.implicit_audiences = static[0].implicit_audiences if static else ()
            union.authenticators.append(tokens)
            return
    raise AssertionError("the server has no bearer token authenticator")


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(status, serializer.encode_json(body))


def _user_dict(user: UserInfo) -> dict[str, Any]:
    return {"name": user.name, "uid": user.uid, "groups": list(user.groups)}


def _parse_user(raw: bytes) -> UserInfo:
    try:
        body = json.loads(raw or b"null")
    except ValueError as err:
        raise errors.bad_request(f"the testing user is not JSON: {err}") from None
    if not isinstance(body, dict):
        raise errors.bad_request('the testing user must be an object: {"name": ..., "groups": [...]}')
    unknown = sorted(set(body) - {"name", "groups", "uid"})
    if unknown:
        raise errors.bad_request(
            f"unknown fields: {', '.join(unknown)}; a testing user has name, groups and uid"
        )
    name, groups, uid = body.get("name"), body.get("groups") or [], body.get("uid") or ""
    if not isinstance(name, str) or not name:
        raise errors.bad_request("name: Required value: a testing user needs a name")
    if not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups):
        raise errors.bad_request("groups: Invalid value: must be a list of non-empty strings")
    if not isinstance(uid, str):
        raise errors.bad_request("uid: Invalid value: must be a string")
    return UserInfo(name, uid, tuple(groups))


def _users_handler(tokens: StaticTokenAuthenticator) -> Handler:
    async def create(req: Request) -> Response:
        user = _parse_user(await req.body(MAX_BODY_BYTES))
        if len(tokens.tokens) >= MAX_USERS:
            raise errors.bad_request(f"at most {MAX_USERS} testing users: DELETE {USERS_PATH} forgets them")
        token = secrets.token_urlsafe(32)
        tokens.add(token, user)
        return _json(201, {"kind": "TestingUser", **_user_dict(user), "token": token})

    async def list_users(req: Request) -> Response:
        return _json(
            200, {"kind": "TestingUserList", "items": [_user_dict(u) for u in tokens.tokens.values()]}
        )

    async def clear(req: Request) -> Response:
        tokens.tokens.clear()
        return _json(200, errors.success_status())

    handlers = {"post": create, "get": list_users, "delete": clear}

    async def serve(req: Request) -> Response:
        handler = handlers.get(req.method.lower())
        try:
            if handler is None:
                raise errors.method_not_allowed()
            return await handler(req)
        except errors.StatusError as err:
            return _json(err.code, err.status())

    return serve
