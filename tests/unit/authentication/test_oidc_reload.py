"""--authentication-config follows its file: a valid change replaces the issuers, a bad one keeps them."""

from __future__ import annotations

import asyncio

import pytest
from oidc_helpers import AUDIENCE, ISSUER, Signer, StaticKeys

from kube_apiserver.authentication.oidc import ConfigError, ReloadingJWTAuthenticators, new_authenticators

HEAD = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"


def config_text(prefix: str, anonymous: bool = False) -> str:
    text = HEAD + (f"jwt:\n- issuer: {{url: '{ISSUER}', audiences: [{AUDIENCE}]}}\n"
                   f"  claimMappings: {{username: {{claim: sub, prefix: '{prefix}'}}}}\n")
    return text + ("anonymous: {enabled: true}\n" if anonymous else "")


def test_reload_follows_the_file(tmp_path):
    signer = Signer()
    path = tmp_path / "authn.yaml"
    path.write_text(config_text("first:"))

    def build(config):
        authenticators = new_authenticators(config, ("RS256",))
        for authenticator in authenticators:
            authenticator._keys = StaticKeys(signer)  # no network in unit tests
        return authenticators

    reloading = ReloadingJWTAuthenticators(str(path), build, [], interval=0)

    def username() -> str:
        return asyncio.run(reloading.authenticate_token(signer.token())).name

    assert username() == "first:alice"
    path.write_text(config_text("second-prefix:"))
    assert username() == "second-prefix:alice"
    path.write_text(config_text("bad", anonymous=False).replace("audiences: [my-client]", "audiences: []"))
    assert username() == "second-prefix:alice"  # invalid: the running issuers stay
    path.write_text(config_text("third:", anonymous=True))
    assert username() == "second-prefix:alice"  # the anonymous authenticator may not change on reload
    path.write_text(config_text("fourth:"))
    assert username() == "fourth:alice"


def test_a_bad_file_at_start_is_an_error(tmp_path):
    path = tmp_path / "authn.yaml"
    path.write_text(HEAD + "jwt: [{issuer: {url: 'http://x'}}]\n")
    with pytest.raises(ConfigError, match="invalid authentication configuration: "):
        ReloadingJWTAuthenticators(str(path), lambda config: [], [])
