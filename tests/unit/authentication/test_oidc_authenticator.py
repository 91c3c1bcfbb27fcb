"""The OIDC JWT authenticator: claims, prefixes, CEL mappings and rules, expiry, audience, issuer, signature."""

from __future__ import annotations

import asyncio
import time

import pytest
from oidc_helpers import AUDIENCE, ISSUER, Signer, authenticator

from kube_apiserver.authentication.interfaces import AuthenticationError

BASIC = f"""- issuer: {{url: "{ISSUER}", audiences: ["{AUDIENCE}", other], audienceMatchPolicy: MatchAny}}
  claimMappings:
    username: {{claim: sub, prefix: "oidc:"}}
    groups: {{claim: groups, prefix: "g:"}}
"""


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer()


def run(auth, token, audiences=()):
    return asyncio.run(auth.authenticate_token(token, audiences))


def error(auth, token) -> str:
    with pytest.raises(AuthenticationError) as info:
        run(auth, token)
    return str(info.value)


def test_claims_and_prefixes(signer):
    auth = authenticator(BASIC, signer)
    user = run(auth, signer.token({"groups": ["dev", "ops"], "jti": "abc"}))
    assert (user.name, user.groups) == ("oidc:alice", ("g:dev", "g:ops"))
    assert user.extra == {"authentication.kubernetes.io/credential-id": ["JTI=abc"]}
    assert run(auth, signer.token({"groups": "single"})).groups == ("g:single",)  # a string is one group


def test_other_issuer_is_not_ours(signer):
    auth = authenticator(BASIC, signer)
    assert run(auth, signer.token(iss="https://elsewhere.example.com")) is None
    assert run(auth, "not-a-jwt") is None


def test_audience_expiry_and_nbf(signer):
    auth = authenticator(BASIC, signer)
    assert error(auth, signer.token(aud="someone-else")) == (
        f'oidc: verify token: oidc: expected audience in ["{AUDIENCE}" "other"] got ["someone-else"]')
    assert run(auth, signer.token(aud=["x", "other"])).name == "oidc:alice"
    assert error(auth, signer.token(exp=1)) == (
        "oidc: verify token: oidc: token is expired (Token Expiry: 1970-01-01 00:00:01 +0000 UTC)")
    assert error(auth, signer.token(exp=None)).startswith("oidc: verify token: oidc: token is expired")
    now = int(time.time())
    assert run(auth, signer.token(nbf=now + 120)).name == "oidc:alice"  # within go-oidc's 5 minutes of leeway
    assert "before the nbf (not before) time" in error(auth, signer.token(nbf=now + 3600))


def test_signature_and_algorithm(signer):
    auth = authenticator(BASIC, signer)
    forged = Signer(kid=signer.kid).token()
    assert error(auth, forged) == "oidc: verify token: failed to verify signature: failed to verify id token signature"
    ec_signer = Signer(kid="ec", alg="ES256")
    assert error(authenticator(BASIC, ec_signer), ec_signer.token()) == (
        'oidc: verify token: oidc: malformed jwt: go-jose/go-jose: unexpected signature algorithm "ES256"; '
        'expected ["RS256"]')
    assert run(authenticator(BASIC, ec_signer, algs=("RS256", "ES256")), ec_signer.token()).name == "oidc:alice"
    ps_signer = Signer(kid="ps", alg="PS256")
    assert run(authenticator(BASIC, ps_signer, algs=("PS256",)), ps_signer.token()).name == "oidc:alice"


def test_email_username_requires_verified(signer):
    auth = authenticator(f"""- issuer: {{url: "{ISSUER}", audiences: ["{AUDIENCE}"]}}
  claimMappings: {{username: {{claim: email, prefix: ""}}}}
""", signer)
    assert run(auth, signer.token({"email": "a@example.com", "email_verified": True})).name == "a@example.com"
    assert run(auth, signer.token({"email": "a@example.com"})).name == "a@example.com"  # absent: not checked
    assert error(auth, signer.token({"email": "a@example.com", "email_verified": False})) == "oidc: email not verified"
    assert error(auth, signer.token()) == 'oidc: parse username claims "email": claim not present'


def test_cel_mappings_and_rules(signer):
    auth = authenticator(f"""- issuer: {{url: "{ISSUER}", audiences: ["{AUDIENCE}"]}}
  claimValidationRules:
  - {{claim: tenant, requiredValue: acme}}
  - {{expression: "claims.exp - claims.iat <= 3600", message: "token lives too long"}}
  claimMappings:
    username: {{expression: "'cel:' + claims.sub"}}
    groups: {{expression: "claims.roles.map(r, 'role:' + r)"}}
    uid: {{expression: "claims.sub + '-uid'"}}
    extra:
    - {{key: example.com/tenant, valueExpression: "claims.tenant"}}
    - {{key: example.com/empty, valueExpression: "''"}}
  userValidationRules:
  - {{expression: "!user.username.startsWith('cel:system:')", message: "no system users"}}
""", signer)
    user = run(auth, signer.token({"tenant": "acme", "roles": ["a", "b"]}))
    assert (user.name, user.uid, user.groups) == ("cel:alice", "alice-uid", ("role:a", "role:b"))
    assert user.extra == {"example.com/tenant": ["acme"]}
    # the mappings are evaluated before the rules, as upstream: the extra mapping fails first
    assert error(auth, signer.token({"roles": []})) == (
        "expression 'claims.tenant' resulted in error: no such key: tenant")
    assert error(auth, signer.token({"tenant": "other", "roles": []})) == (
        "oidc: required claim tenant value does not match. Got = other, want = acme")
    assert error(auth, signer.token({"tenant": "acme", "roles": [], "exp": int(time.time()) + 7200})) == (
        "oidc: error evaluating claim validation expression: validation expression "
        "'claims.exp - claims.iat <= 3600' failed: token lives too long")
    assert error(auth, signer.token({"tenant": "acme", "roles": [], "sub": "system:x"})) == (
        "oidc: error evaluating user info validation rule: validation expression "
        "'!user.username.startsWith('cel:system:')' failed: no system users")
    assert error(auth, signer.token({"tenant": "acme", "roles": [1]})) == (
        "oidc: error evaluating group claim expression: expression 'claims.roles.map(r, 'role:' + r)' resulted in "
        "error: no such overload")


def test_required_claims_and_string_lists(signer):
    auth = authenticator(f"""- issuer: {{url: "{ISSUER}", audiences: ["{AUDIENCE}"]}}
  claimValidationRules: [{{claim: tenant, requiredValue: acme}}]
  claimMappings:
    username: {{claim: sub, prefix: ""}}
    groups: {{expression: "claims.roles"}}
""", signer)
    assert error(auth, signer.token({"roles": []})) == "oidc: required claim tenant not present in ID token"
    assert run(auth, signer.token({"tenant": "acme", "roles": ["a", ""]})).groups == ("a",)
    assert error(auth, signer.token({"tenant": "acme", "roles": [1]})) == (
        "oidc: error evaluating group claim expression: expression must return a string or a list of strings")


def test_api_audiences_bound_the_token(signer):
    auth = authenticator(BASIC, signer)
    auth.implicit_audiences = ("https://kubernetes.default.svc",)
    assert run(auth, signer.token(), ("https://kubernetes.default.svc",)).name == "oidc:alice"
    assert run(auth, signer.token(), ("vault",)) is None  # audience agnostic: good for the API audiences only


def test_an_issuer_that_does_not_answer_is_not_initialized(signer):
    from kube_apiserver.authentication.oidc import OIDCAuthenticator

    closed = "https://127.0.0.1:1"  # nothing listens on port 1: refused at once, no DNS involved
    auth = authenticator(BASIC.replace(ISSUER, closed), signer)
    unreachable = OIDCAuthenticator(auth.config, min_refresh=3600)  # discovery at the first token, then not again
    assert error(unreachable, signer.token(iss=closed)) == "oidc: authenticator not initialized"
    assert error(unreachable, signer.token(iss=closed)) == "oidc: authenticator not initialized"
