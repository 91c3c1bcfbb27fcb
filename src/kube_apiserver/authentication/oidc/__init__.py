"""OIDC / JWT authentication (--oidc-* and --authentication-config's jwt[]): one authenticator per issuer,
asked in the configuration's order within the token authenticators."""

from __future__ import annotations

from .authenticator import OIDCAuthenticator
from .config import AuthenticationConfiguration, ConfigError, JWTAuthenticator, load, load_file, validate
from .jwks import ALL_SIGNING_ALGS
from .reload import ReloadingJWTAuthenticators

__all__ = [
    "ALL_SIGNING_ALGS", "AuthenticationConfiguration", "ConfigError", "JWTAuthenticator", "OIDCAuthenticator",
    "ReloadingJWTAuthenticators", "load", "load_file", "new_authenticators", "validate",
]


def new_authenticators(config: AuthenticationConfiguration, signing_algs: tuple[str, ...],
                       implicit_audiences: tuple[str, ...] = ()) -> list[OIDCAuthenticator]:
    """The authenticators of a validated configuration (its expressions compiled)."""
    return [OIDCAuthenticator(jwt, signing_algs, implicit_audiences=implicit_audiences) for jwt in config.jwt]
