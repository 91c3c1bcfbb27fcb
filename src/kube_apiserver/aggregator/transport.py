"""HTTPS to aggregated API servers (client-go transport as the aggregator configures it): the pooled
session, TLS contexts and Go-worded errors of endpoints/proxy/transport.py, and the request-header
identity (X-Remote-*) of the user the request is made for."""

from __future__ import annotations

from collections.abc import Iterable

from multidict import CIMultiDict

from ..endpoints.proxy.transport import CONNECT_TIMEOUT, HOP_BY_HOP, Transport, go_error
from ..registry.context import UserInfo

__all__ = ["CONNECT_TIMEOUT", "HOP_BY_HOP", "Transport", "auth_proxy_headers", "go_error", "header_key_escape"]

# RFC 7230 token characters: what an X-Remote-Extra- key may hold unescaped.
_TOKEN = frozenset("!#$&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def header_key_escape(key: str) -> str:
    """headerKeyEscape: bytes that are not token characters (and '%') are %-encoded."""
    return "".join(chr(b) if chr(b) in _TOKEN else f"%{b:02X}" for b in key.encode())


def auth_proxy_headers(headers: Iterable[tuple[str, str]], user: UserInfo) -> CIMultiDict[str]:
    """SetAuthProxyHeaders: any X-Remote-User/-Uid/-Group/-Extra-* the client sent is replaced by the
    authenticated user's."""
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in headers:
        lower = name.lower()
        if lower in ("x-remote-user", "x-remote-uid", "x-remote-group") or lower.startswith("x-remote-extra-"):
            continue
        out.add(name, value)
    out["X-Remote-User"] = user.name
    if user.uid:
        out["X-Remote-Uid"] = user.uid
    for group in user.groups:
        out.add("X-Remote-Group", group)
    for key, values in (user.extra or {}).items():
        for value in values:
            out.add("X-Remote-Extra-" + header_key_escape(key), value)
    return out
