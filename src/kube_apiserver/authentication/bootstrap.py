"""Bootstrap tokens (--enable-bootstrap-token-auth, k8s plugin/pkg/auth/authenticator/token/bootstrap): a token
`<id>.<secret>` is the user system:bootstrap:<id> when kube-system/bootstrap-token-<id> is a live, unexpired
Secret of type bootstrap.kubernetes.io/token holding that secret and marked for authentication. A token that does
not match is not this authenticator's (no error, as upstream only logs why)."""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
import re
from datetime import datetime
from typing import Any

from ..apimachinery.clock import wall_now
from ..registry.context import UserInfo
from ..serviceaccount.claims import ObjectGetter

log = logging.getLogger("kube_apiserver.authentication")

NAMESPACE = "kube-system"
SECRET_PREFIX = "bootstrap-token-"
SECRET_TYPE = "bootstrap.kubernetes.io/token"
USER_PREFIX = "system:bootstrap:"
DEFAULT_GROUP = "system:bootstrappers"
TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
EXTRA_GROUP = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$")


class BootstrapTokenAuthenticator:
    def __init__(self, get_object: ObjectGetter):
        self.get_object = get_object

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        match = TOKEN.match(token)
        if match is None:
            return None
        token_id, token_secret = match.groups()
        secret = await self.get_object("secrets", NAMESPACE, SECRET_PREFIX + token_id)
        if secret is None:
            return None
        why = _refusal(secret, token_id, token_secret)
        if why:
            log.debug("Bootstrap secret %s/%s %s", NAMESPACE, SECRET_PREFIX + token_id, why)
            return None
        groups = _groups(secret_data(secret, "auth-extra-groups"))
        if groups is None:
            log.debug("Bootstrap secret %s/%s has invalid value for key auth-extra-groups", NAMESPACE,
                      SECRET_PREFIX + token_id)
            return None
        return UserInfo(USER_PREFIX + token_id, groups=groups)


def secret_data(secret: dict[str, Any], key: str) -> str:
    value = (secret.get("data") or {}).get(key)
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return ""


def _refusal(secret: dict[str, Any], token_id: str, token_secret: str) -> str:
    """Why the Secret does not authenticate this token, or ""."""
    if (secret.get("metadata") or {}).get("deletionTimestamp"):
        return "is deleted and awaiting removal"
    if secret.get("type") != SECRET_TYPE or not secret.get("data"):
        return f"has invalid type, expected {SECRET_TYPE}."
    if not hmac.compare_digest(secret_data(secret, "token-secret").encode(), token_secret.encode()):
        return "has invalid value for key token-secret."
    if secret_data(secret, "token-id") != token_id:
        return "has invalid value for key token-id."
    if has_expired(secret_data(secret, "expiration")):
        return "has expired."
    if secret_data(secret, "usage-bootstrap-authentication") != "true":
        return "not marked usage-bootstrap-authentication=true."
    return ""


def has_expired(expiration: str) -> bool:
    """bootstrapsecretutil.HasExpired: an expiration that does not parse counts as passed."""
    if not expiration:
        return False
    try:
        when = datetime.fromisoformat(expiration.replace("Z", "+00:00"))
    except ValueError:
        return True
    if when.tzinfo is None:
        return True
    return wall_now() > when


def _groups(extra: str) -> tuple[str, ...] | None:
    """GetGroups: system:bootstrappers and the valid extra groups, sorted; None when one is invalid."""
    groups = {DEFAULT_GROUP}
    for group in (g.strip() for g in extra.split(",")) if extra else ():
        if not EXTRA_GROUP.match(group):
            return None
        groups.add(group)
    return tuple(sorted(groups))
