"""The opaque `continue` token of paged lists: the revision of the first page and the next key."""

from __future__ import annotations

import base64
import binascii

import orjson


class InvalidContinueError(ValueError):
    pass


def encode(next_key: str, key_prefix: str, revision: int) -> str:
    token = {"v": "meta.k8s.io/v1", "rv": revision, "start": next_key[len(key_prefix):]}
    return base64.urlsafe_b64encode(orjson.dumps(token)).rstrip(b"=").decode()


def decode(token: str, key_prefix: str) -> tuple[str, int]:
    """Returns (the key to start from, the revision); revision -1 means the latest."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidContinueError("continue key is not valid: illegal base64 data") from None
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
        raise InvalidContinueError("continue key is not valid: server does not recognize this encoded key")
    start, rev = data.get("start"), data.get("rv")
    if not isinstance(start, str) or not isinstance(rev, int) or rev == 0 or rev < -1:
        raise InvalidContinueError("continue key is not valid: incorrect encoded start resourceVersion")
    if start.startswith("/") or ".." in start.split("/"):
        raise InvalidContinueError("continue key is not valid: key must not be an absolute path or contain '..'")
    return key_prefix + start, rev
