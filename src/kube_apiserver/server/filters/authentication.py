"""Authentication: who is asking. A bad credential or no identity at all gets 401 Unauthorized. Each attempt is
counted (authentication_attempts, authentication_duration_seconds, authenticated_user_requests) as upstream's
filter counts them."""

from __future__ import annotations

import logging
import time

from ... import metrics
from ...apimachinery import errors
from ...authentication.interfaces import AuthenticationError, RequestAuthenticator
from ...endpoints.http import Handler, Request, Response

log = logging.getLogger("kube_apiserver.authentication")
KNOWN_USERNAMES = frozenset({"admin", "client", "kube_proxy", "kubelet", "system:serviceaccount:kube-system:default"})


class AuthenticationMetrics:
    def __init__(self) -> None:
        self.users = metrics.Counter("authenticated_user_requests",
                                     "Counter of authenticated requests broken out by username.", ("username",))
        self.attempts = metrics.Counter("authentication_attempts", "Counter of authenticated attempts.",
                                        ("result",))
        self.latency = metrics.Histogram("authentication_duration_seconds",
                                         "Authentication duration in seconds broken out by result.", ("result",),
                                         metrics.exponential_buckets(0.001, 2, 15))
        self.lines = metrics.collector(self.users, self.attempts, self.latency)

    def record(self, result: str, seconds: float, username: str = "") -> None:
        if result == "success":
            self.users.inc(compress_username(username))
        self.attempts.inc(result)
        self.latency.observe(result, value=seconds)


def compress_username(username: str) -> str:
    """compressUsername: known internal identities by name, the rest as email_id or other."""
    if username in KNOWN_USERNAMES:
        return username
    return "email_id" if "@" in username else "other"


def with_authentication(handler: Handler, authenticator: RequestAuthenticator,
                        measured: AuthenticationMetrics | None = None) -> Handler:
    async def authenticating(req: Request) -> Response:
        start = time.perf_counter()
        try:
            user = await authenticator.authenticate(req)
            result = "success" if user is not None else "failure"
        except AuthenticationError as err:
            log.debug("Unable to authenticate the request: %s", err)
            user, result = None, "error"
        if measured is not None:
            measured.record(result, time.perf_counter() - start, user.name if user is not None else "")
        if user is None:
            raise errors.unauthorized()
        req.user = user
        # The credential ends here: nothing after authentication sees it.
        req.headers.pop("authorization", None)
        return await handler(req)
    return authenticating
