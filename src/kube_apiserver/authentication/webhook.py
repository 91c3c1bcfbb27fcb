"""Webhook token authentication (--authentication-token-webhook-*, k8s plugin/pkg/authenticator/token/webhook):
a bearer token no local authenticator knows is sent in a TokenReview to the webhook; its answer is cached for
the cache TTL, successes and failures alike (tokencache with both TTLs set to it)."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from typing import Any

from ..registry.context import UserInfo
from ..webhook.generic import GenericWebhook, WebhookError
from .interfaces import AuthenticationError

DEFAULT_CACHE_TTL = 120.0
CACHE_SIZE = 4096  # entries (token hashes): bounded however many distinct tokens arrive
VERSIONS = {"v1": "authentication.k8s.io/v1", "v1beta1": "authentication.k8s.io/v1beta1"}


class _Answer:
    __slots__ = ("user", "error", "expires")

    def __init__(self, user: UserInfo | None, error: str, expires: float):
        self.user, self.error, self.expires = user, error, expires


class WebhookTokenAuthenticator:
    def __init__(self, webhook: GenericWebhook, version: str = "v1beta1", cache_ttl: float = DEFAULT_CACHE_TTL,
                 implicit_audiences: tuple[str, ...] = ()):
        self.webhook = webhook
        self.api_version = VERSIONS[version]
        self.cache_ttl = cache_ttl
        self.implicit_audiences = implicit_audiences
        self._cache: OrderedDict[bytes, _Answer] = OrderedDict()

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        wanted = audiences or self.implicit_audiences
        key = hashlib.sha256(token.encode() + b"\0" + "\0".join(wanted).encode()).digest()
        answer = self._cached(key)
        if answer is None:
            answer = await self._review(token, wanted)
            if self.cache_ttl > 0 and answer.expires:
                self._remember(key, answer)
        if answer.error:
            raise AuthenticationError(answer.error)
        return answer.user

    def _cached(self, key: bytes) -> _Answer | None:
        answer = self._cache.get(key)
        if answer is None:
            return None
        if answer.expires <= time.monotonic():
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return answer

    def _remember(self, key: bytes, answer: _Answer) -> None:
        self._cache[key] = answer
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    async def _review(self, token: str, audiences: tuple[str, ...]) -> _Answer:
        expires = time.monotonic() + self.cache_ttl
        spec: dict[str, Any] = {"token": token}
        if audiences:
            spec["audiences"] = list(audiences)
        review = {"apiVersion": self.api_version, "kind": "TokenReview", "metadata": {"creationTimestamp": None},
                  "spec": spec, "status": {"user": {}}}
        try:
            answer = await self.webhook.post(review)
        except WebhookError as err:
            # A webhook that cannot be reached is not cached: the next request asks again.
            return _Answer(None, str(err), 0.0)
        status = answer.get("status") if isinstance(answer.get("status"), dict) else {}
        if not status.get("authenticated"):
            return _Answer(None, str(status.get("error") or ""), expires)
        granted = status.get("audiences") or self.implicit_audiences
        if audiences and not set(granted) & set(audiences):
            return _Answer(None, "", expires)  # good for other audiences: not this server's user
        return _Answer(_user(status.get("user")), "", expires)


def _user(raw: Any) -> UserInfo:
    raw = raw if isinstance(raw, dict) else {}
    extra = raw.get("extra") if isinstance(raw.get("extra"), dict) else {}
    return UserInfo(str(raw.get("username") or ""), str(raw.get("uid") or ""),
                    tuple(str(g) for g in raw.get("groups") or ()),
                    {str(k): [str(v) for v in values or ()] for k, values in extra.items()})
