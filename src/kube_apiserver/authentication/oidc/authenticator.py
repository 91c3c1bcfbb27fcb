"""The JWT authenticator of one issuer (k8s.io/apiserver/plugin/pkg/authenticator/token/oidc): a token whose
`iss` is not this issuer's is not its business (None); one that is must be well signed by a key of the
issuer's JWKS, current, for one of the audiences, and pass the claim rules, or it is an
AuthenticationError worded as upstream's. The user comes from the claim mappings."""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import Callable
from typing import Any

import orjson

from ... import cel, logs
from ...apimachinery.gostrconv import quote as go_quote
from ...registry.context import UserInfo
from ...serviceaccount.jwt import ParsedToken, TokenFormatError, b64url_decode, parse
from ..interfaces import AuthenticationError
from .config import JWTAuthenticator, PrefixedClaimOrExpression
from .jwks import DEFAULT_MIN_REFRESH, FetchError, RemoteKeySet, fetch_json, tls_context, verify_signature

NBF_LEEWAY = 300.0  # go-oidc: five minutes of clock skew on `nbf`; `exp` gets none
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
WELL_KNOWN = "/.well-known/openid-configuration"
STRINGS_ERROR = "expression must return a string or a list of strings"


class OIDCAuthenticator:
    def __init__(self, config: JWTAuthenticator, signing_algs: tuple[str, ...] = ("RS256",),
                 min_refresh: float = DEFAULT_MIN_REFRESH, now: Callable[[], float] = time.time,
                 implicit_audiences: tuple[str, ...] = (), key_set: RemoteKeySet | None = None):
        self.config = config
        # ID tokens are for the issuer's audiences, not the API's: good for the API audiences only
        # (WrapAudienceAgnosticToken), as static tokens.
        self.implicit_audiences = implicit_audiences
        self.issuer = config.issuer.url
        self.audiences = frozenset(config.issuer.audiences)
        self.signing_algs = signing_algs
        self.min_refresh = min_refresh
        self.now = now
        self.required_claims = {r.claim: r.required_value for r in config.claim_validation_rules if r.claim}
        self._context = tls_context(config.issuer.certificate_authority)
        self._keys = key_set  # found by discovery at the first token when not given
        self._init_lock = asyncio.Lock()
        self._last_init = float("-inf")

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        if _issuer_of(token) != self.issuer:
            return None
        if audiences and self.implicit_audiences and not set(audiences) & set(self.implicit_audiences):
            return None
        keys = await self._key_set()
        if keys is None:
            raise AuthenticationError("oidc: authenticator not initialized")
        try:
            claims = await self._verify(token, keys)
        except _VerifyError as err:
            raise AuthenticationError(f"oidc: verify token: {err}") from None
        return self._user(claims)

    # --- discovery ---------------------------------------------------------------------------------

    async def _key_set(self) -> RemoteKeySet | None:
        """The key set, once discovery has told its URL; discovery is retried at most every min_refresh."""
        if self._keys is not None:
            return self._keys
        async with self._init_lock:
            if self._keys is None and time.monotonic() - self._last_init >= self.min_refresh:
                self._last_init = time.monotonic()
                try:
                    self._keys = RemoteKeySet(await self._jwks_url(), self._context, self.min_refresh)
                except FetchError as err:
                    logs.error('"oidc authenticator: initializing plugin" issuer="%s" err="%s"', self.issuer, err)
                    return None
        return self._keys

    async def _jwks_url(self) -> str:
        url = self.config.issuer.discovery_url or self.issuer.rstrip("/") + WELL_KNOWN
        document = await fetch_json(url, self._context)
        if not isinstance(document, dict):
            raise FetchError("oidc: failed to decode provider discovery object")
        # Upstream checks the discovery's issuer only when no discoveryURL overrides where it is found.
        if not self.config.issuer.discovery_url and document.get("issuer") != self.issuer:
            raise FetchError(f'oidc: issuer did not match the issuer returned by provider, expected "{self.issuer}" '
                             f'got "{document.get("issuer")}"')
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str) or not jwks_uri:
            raise FetchError("provider did not return JWKS URL")
        return jwks_uri

    # --- verification (go-oidc's IDTokenVerifier.Verify, then the audiences) ------------------------

    async def _verify(self, token: str, keys: RemoteKeySet) -> dict[str, Any]:
        try:
            parsed = parse(token)
        except TokenFormatError as err:
            raise _VerifyError(f"oidc: malformed jwt: {err}") from None
        alg = parsed.header.get("alg")
        if alg not in self.signing_algs:
            expected = "[" + " ".join(go_quote(a) for a in self.signing_algs) + "]"
            raise _VerifyError(f"oidc: malformed jwt: go-jose/go-jose: unexpected signature algorithm "
                               f"{go_quote(str(alg))}; expected {expected}")
        claims = parsed.claims
        if claims.get("iss") != self.issuer:
            raise _VerifyError(f"oidc: id token issued by a different provider, expected {go_quote(self.issuer)} "
                               f"got {go_quote(str(claims.get('iss')))}")
        self._check_times(claims)
        await self._check_signature(parsed, keys)
        token_audiences = _audiences(claims.get("aud"))
        if not self.audiences & set(token_audiences):
            raise _VerifyError(f"oidc: expected audience in {_go_list(sorted(self.audiences))} got "
                               f"{_go_list(token_audiences)}")
        return claims

    def _check_times(self, claims: dict[str, Any]) -> None:
        now = self.now()
        expiry = _number(claims.get("exp"))
        if expiry < now:
            raise _VerifyError(f"oidc: token is expired (Token Expiry: {_go_time(expiry)})")
        not_before = claims.get("nbf")
        if not_before is not None and now + NBF_LEEWAY < _number(not_before):
            raise _VerifyError(f"oidc: current time {_go_time(now)} before the nbf (not before) time: "
                               f"{_go_time(_number(not_before))}")

    async def _check_signature(self, parsed: ParsedToken, keys: RemoteKeySet) -> None:
        kid = parsed.header.get("kid")
        try:
            candidates = await keys.keys_for(kid if isinstance(kid, str) else "")
        except FetchError as err:
            raise _VerifyError(f"failed to verify signature: fetching keys {err}") from None
        alg = str(parsed.header["alg"])
        if not any(verify_signature(k.key, alg, parsed.signing_input, parsed.signature) for k in candidates):
            raise _VerifyError("failed to verify signature: failed to verify id token signature")

    # --- the user ----------------------------------------------------------------------------------

    def _user(self, claims: dict[str, Any]) -> UserInfo:
        mappings = self.config.claim_mappings
        activation = {"claims": claims}
        name = self._username(claims, mappings.username, activation)
        groups = self._groups(claims, mappings.groups, activation)
        uid = self._uid(claims, activation)
        extra = self._extra(claims, activation)
        self._check_required_claims(claims)
        self._check_claim_rules(activation)
        user = UserInfo(name, uid, tuple(groups), extra)
        self._check_user_rules(user)
        return user

    def _username(self, claims: dict[str, Any], mapping: PrefixedClaimOrExpression,
                  activation: dict[str, Any]) -> str:
        if mapping.program is not None:
            value = _evaluate(mapping.program, activation, "oidc: error evaluating username claim expression")
            if not isinstance(value, str):
                raise AuthenticationError("oidc: error evaluating username claim expression: username claim "
                                          "expression must return a string")
            if not value:
                raise AuthenticationError("oidc: empty username via CEL expression is not allowed")
            return value
        username = claims.get(mapping.claim)
        if not isinstance(username, str):
            raise AuthenticationError(f"oidc: parse username claims {go_quote(mapping.claim)}: "
                                      f"{_unmarshal_error(mapping.claim in claims, username, 'string')}")
        if mapping.claim == "email" and "email_verified" in claims:
            verified = claims["email_verified"]
            if not isinstance(verified, bool):
                raise AuthenticationError("oidc: parse 'email_verified' claim: "
                                          f"{_unmarshal_error(True, verified, 'bool')}")
            if not verified:
                raise AuthenticationError("oidc: email not verified")
        return (mapping.prefix or "") + username

    def _groups(self, claims: dict[str, Any], mapping: PrefixedClaimOrExpression,
                activation: dict[str, Any]) -> list[str]:
        if mapping.claim and mapping.claim in claims:
            value = claims[mapping.claim]
            # A single string is one group, as upstream allows ("role" claims).
            groups = [value] if isinstance(value, str) else value
            if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
                raise AuthenticationError(f"oidc: parse groups claim {go_quote(mapping.claim)}: "
                                          f"{_unmarshal_error(True, value, '[]string')}")
            return [(mapping.prefix or "") + g for g in groups]
        if mapping.program is None:
            return []
        value = _evaluate(mapping.program, activation, "oidc: error evaluating group claim expression")
        return _string_list(value, "oidc: error evaluating group claim expression")

    def _uid(self, claims: dict[str, Any], activation: dict[str, Any]) -> str:
        mapping = self.config.claim_mappings.uid
        if mapping.claim:
            value = claims.get(mapping.claim)
            if not isinstance(value, str):
                raise AuthenticationError(f"oidc: parse uid claim {go_quote(mapping.claim)}: "
                                          f"{_unmarshal_error(mapping.claim in claims, value, 'string')}")
            return value
        if mapping.program is None:
            return ""
        value = _evaluate(mapping.program, activation, "oidc: error evaluating uid claim expression")
        if not isinstance(value, str):
            raise AuthenticationError("oidc: error evaluating uid claim expression: uid claim expression must "
                                      "return a string")
        return value

    def _extra(self, claims: dict[str, Any], activation: dict[str, Any]) -> dict[str, list[str]]:
        extra: dict[str, list[str]] = {}
        jti = claims.get("jti")
        if isinstance(jti, str) and jti:
            extra[CREDENTIAL_ID_KEY] = [f"JTI={jti}"]
        for mapping in self.config.claim_mappings.extra:
            if mapping.program is None:
                continue
            value = _evaluate(mapping.program, activation, "")  # upstream returns the mapper's error bare
            values = _string_list(value, f"oidc: error evaluating extra claim expression: {mapping.value_expression}")
            if values:
                extra[mapping.key] = values
        return extra

    def _check_required_claims(self, claims: dict[str, Any]) -> None:
        for claim, wanted in self.required_claims.items():
            if claim not in claims:
                raise AuthenticationError(f"oidc: required claim {claim} not present in ID token")
            value = claims[claim]
            if not isinstance(value, str):
                raise AuthenticationError(f"oidc: parse claim {claim}: {_unmarshal_error(True, value, 'string')}")
            if value != wanted:
                raise AuthenticationError(f"oidc: required claim {claim} value does not match. Got = {value}, "
                                          f"want = {wanted}")

    def _check_claim_rules(self, activation: dict[str, Any]) -> None:
        rules = [r for r in self.config.claim_validation_rules if r.program is not None]
        _check_rules(rules, activation, "oidc: error evaluating claim validation expression")

    def _check_user_rules(self, user: UserInfo) -> None:
        rules = [r for r in self.config.user_validation_rules if r.program is not None]
        if rules:
            value = {"username": user.name, "uid": user.uid, "groups": list(user.groups), "extra": user.extra}
            _check_rules(rules, {"user": value}, "oidc: error evaluating user info validation rule")


class _VerifyError(Exception):
    pass


def _check_rules(rules: list[Any], activation: dict[str, Any], context: str) -> None:
    for rule in rules:
        value = _evaluate(rule.program, activation, context)
        if not isinstance(value, bool):
            raise AuthenticationError(f"{context}: validation expression must return a boolean")
        if not value:
            raise AuthenticationError(f"{context}: validation expression '{rule.expression}' failed: {rule.message}")


def _evaluate(program: cel.Program, activation: dict[str, Any], context: str) -> Any:
    try:
        return program.evaluate(activation)
    except cel.EvaluationError as err:
        message = f"expression '{program.expression}' resulted in error: {err}"
        raise AuthenticationError(f"{context}: {message}" if context else message) from None


def _string_list(value: Any, context: str) -> list[str]:
    """convertCELValueToStringList: a string or a list of strings; empty ones and null are nothing."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    raise AuthenticationError(f"{context}: {STRINGS_ERROR}")


def _issuer_of(token: str) -> str | None:
    """hasCorrectIssuer's reading: the unverified `iss` of a compact JWT, None for anything else."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = orjson.loads(b64url_decode(parts[1]))
    except (TokenFormatError, ValueError):
        return None
    issuer = claims.get("iss") if isinstance(claims, dict) else None
    return issuer if isinstance(issuer, str) else None


def _audiences(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _go_time(seconds: float) -> str:
    """Go's time.Time String() in UTC ("0001-01-01 00:00:00 +0000 UTC" for a missing claim)."""
    if seconds <= 0:
        return "0001-01-01 00:00:00 +0000 UTC"
    moment = datetime.datetime.fromtimestamp(int(seconds), datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _go_list(values: list[str]) -> str:
    """Go's %q of a []string."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def _unmarshal_error(present: bool, value: Any, go_type: str) -> str:
    if not present:
        return "claim not present"
    kinds = {bool: "bool", str: "string", list: "array", dict: "object", type(None): "null"}
    kind = kinds.get(type(value), "number")
    return f"json: cannot unmarshal {kind} into Go value of type {go_type}"
