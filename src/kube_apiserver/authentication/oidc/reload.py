"""--authentication-config read again when the file changes, as kube-apiserver does: a configuration that
loads and validates replaces the JWT authenticators; one that does not keeps the running ones, with one
error line. The file is looked at (a stat) at most once per `interval`, by the token requests themselves,
so nothing runs in the background. The anonymous authenticator is not reloaded (upstream refuses changes
to it on reload)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from ... import logs
from ...apimachinery.field import aggregate_message
from ...apimachinery.filewatch import FileWatch
from ...registry.context import UserInfo
from ..request import UnionTokenAuthenticator
from .authenticator import OIDCAuthenticator
from .config import AuthenticationConfiguration, ConfigError, load, validate

CHECK_INTERVAL = 1.0  # seconds between two looks at the file


class ReloadingJWTAuthenticators:
    """The JWT authenticators of a configuration file, asked in order (a token union of their own)."""

    def __init__(self, path: str, build: Callable[[AuthenticationConfiguration], list[OIDCAuthenticator]],
                 disallowed_issuers: list[str], interval: float = CHECK_INTERVAL):
        self.path = path
        self.build = build
        self.disallowed_issuers = disallowed_issuers
        self.interval = interval
        self.authenticators: list[OIDCAuthenticator] = []
        self._digest = b""
        self._anonymous: object = None
        self.watch = FileWatch(path, interval)
        self._reload(initial=True)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        if self.watch.changed():
            self._reload()
        return await UnionTokenAuthenticator(self.authenticators).authenticate_token(token, audiences)

    def _reload(self, initial: bool = False) -> None:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
            digest = hashlib.sha256(data).digest()
            if digest == self._digest:
                return
            config = load(data)
            errors = validate(config, self.disallowed_issuers)
            if errors:
                raise ConfigError(f"invalid authentication configuration: {aggregate_message(errors)}")
        except (OSError, ConfigError) as err:
            if initial:
                raise ConfigError(str(err)) from None
            logs.error('"Failed to reload authentication configuration" path="%s" err="%s"', self.path, err)
            return
        anonymous = config.anonymous
        if not initial and anonymous != self._anonymous:
            logs.error('"Failed to reload authentication configuration" path="%s" err="changes to the anonymous '
                       'authenticator are not allowed on reload"', self.path)
            return
        self.authenticators, self._digest, self._anonymous = self.build(config), digest, anonymous
        if not initial:
            logs.info('"Reloaded authentication configuration" path="%s" issuers=%d', self.path,
                      len(self.authenticators))
