"""The claims of a service account token (pkg/serviceaccount/claims.go): the registered ones and the
`kubernetes.io` private claim, and their validation against the live objects they name."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from .util import ServiceAccountInfo, credential_id_for_jti, make_username

Object = dict[str, Any]
Claims = dict[str, Any]
# Injected bound service account token expiration which triggers monitoring of its time-bound feature.
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
# Extended expiration for those modified tokens involved in safe rollout of the time-bound feature.
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60
LEEWAY = 60  # go-jose jwt.DefaultLeeway
# (resource, namespace, name) -> the live object, or None when it does not exist
ObjectGetter = Callable[[str, str, str], Awaitable[Object | None]]
INVALIDATED = "service account token has been invalidated"


class ClaimsError(Exception):
    """The token's claims do not hold (expired, or the objects it is bound to are gone)."""


def _ref(obj: Object) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    return {k: v for k, v in (("name", meta.get("name", "")), ("uid", meta.get("uid", ""))) if v}


def new_claims(sa: Object, audiences: list[str], expiration_seconds: int, *, pod: Object | None = None,
               secret: Object | None = None, node: Object | None = None, warnafter: int = 0,
               now: int | None = None) -> Claims:
    """Claims(): the token's claims, bound to at most one of pod (with its node), secret or node."""
    issued = int(datetime.datetime.now(datetime.UTC).timestamp()) if now is None else now
    meta = sa.get("metadata") or {}
    private: Object = {"namespace": meta.get("namespace", ""), "serviceaccount": _ref(sa)}
    if pod is not None:
        private["pod"] = _ref(pod)
        if node is not None:
            private["node"] = _ref(node)
    elif secret is not None:
        private["secret"] = _ref(secret)
    elif node is not None:
        private["node"] = _ref(node)
    if warnafter:
        private["warnafter"] = issued + warnafter
    claims: Claims = {"sub": make_username(meta.get("namespace", ""), meta.get("name", "")), "iat": issued,
                      "nbf": issued, "exp": issued + expiration_seconds, "jti": str(uuid.uuid4()),
                      "kubernetes.io": private}
    if audiences:
        claims["aud"] = list(audiences)
    return claims


def _number(claims: Claims, key: str) -> float | None:
    value = claims.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ClaimsError("service account token claims could not be validated due to unexpected validation error")
    return float(value)


def check_times(claims: Claims, now: float) -> None:
    """jwt.Claims.Validate with the default leeway, and the messages Kubernetes gives."""
    not_before, expiry, issued = _number(claims, "nbf"), _number(claims, "exp"), _number(claims, "iat")
    if not_before is not None and now + LEEWAY < not_before:
        raise ClaimsError("service account token is not valid yet")
    if expiry is not None and now - LEEWAY > expiry:
        raise ClaimsError("service account token has expired")
    if issued is not None and now + LEEWAY < issued:
        raise ClaimsError("service account token is issued in the future")


def _deleted_before(obj: Object, limit: float) -> bool:
    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not stamp:
        return False
    when = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    return when.timestamp() < limit


def _uid(obj: Object) -> str:
    return (obj.get("metadata") or {}).get("uid", "")


async def _check_bound(get: ObjectGetter, resource: str, namespace: str, ref: Any, kind: str, limit: float) -> None:
    """A bound object must still exist with the claimed uid and not be long deleted."""
    ref = ref if isinstance(ref, dict) else {}
    name = ref.get("name", "")
    obj = await get(resource, namespace, name)
    if obj is None:
        raise ClaimsError(INVALIDATED)
    if ref.get("uid", "") != _uid(obj):
        raise ClaimsError(f"{kind} UID ({_uid(obj)}) does not match service account {kind} ref claim "
                          f"({ref.get('uid', '')})")
    if _deleted_before(obj, limit):
        raise ClaimsError(INVALIDATED)


async def _check_service_account(get: ObjectGetter, namespace: str, ref: dict[str, Any], limit: float) -> None:
    name = ref.get("name", "")
    sa = await get("serviceaccounts", namespace, name)
    if sa is None:
        raise ClaimsError(f'serviceaccounts "{name}" not found')
    if _uid(sa) != ref.get("uid", ""):
        raise ClaimsError(f"service account UID ({_uid(sa)}) does not match claim ({ref.get('uid', '')})")
    if _deleted_before(sa, limit):
        raise ClaimsError(f"service account {namespace}/{name} has been deleted")


def _private(claims: Claims) -> dict[str, Any]:
    private = claims.get("kubernetes.io")
    if not isinstance(private, dict) or not isinstance(private.get("serviceaccount", {}), dict):
        raise ClaimsError("service account token claims could not be validated due to unexpected validation error")
    return private


async def validate(claims: Claims, get: ObjectGetter, now: float) -> ServiceAccountInfo:
    """validator.Validate: times, then the service account and bound objects against the live ones."""
    check_times(claims, now)
    private, limit = _private(claims), now - LEEWAY
    namespace, sa_ref = str(private.get("namespace", "")), private.get("serviceaccount") or {}
    await _check_service_account(get, namespace, sa_ref, limit)
    pod, node = private.get("pod"), private.get("node")
    if private.get("secret") is not None:
        await _check_bound(get, "secrets", namespace, private["secret"], "secret", limit)
    if pod is not None:
        await _check_bound(get, "pods", namespace, pod, "pod", limit)
    elif node is not None:
        await _check_bound(get, "nodes", "", node, "node", limit)
    pod, node = pod if isinstance(pod, dict) else {}, node if isinstance(node, dict) else {}
    return ServiceAccountInfo(namespace, sa_ref.get("name", ""), sa_ref.get("uid", ""), pod.get("name", ""),
                              pod.get("uid", ""), node.get("name", ""), node.get("uid", ""),
                              credential_id_for_jti(str(claims.get("jti") or "")))
