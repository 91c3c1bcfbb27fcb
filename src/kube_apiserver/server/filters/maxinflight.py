"""WithMaxInFlightLimit (k8s.io/apiserver pkg/server/filters/maxinflight.go), the limit when API Priority
and Fairness is off: at most --max-requests-inflight read-only (get, list, watch) and
--max-mutating-requests-inflight other requests execute at once (0: no limit). Long-running requests are
not counted; past the limit, system:masters is still served, anyone else is answered 429."""

from __future__ import annotations

from ...endpoints.http import Handler, Request, Response, text
from .timeout import is_long_running

NON_MUTATING_VERBS = frozenset({"get", "list", "watch"})
SYSTEM_PRIVILEGED_GROUP = "system:masters"
TOO_MANY_REQUESTS_MESSAGE = "Too many requests, please try again later."


def too_many_requests(retry_after: str) -> Response:
    """tooManyRequests: Go's http.Error, so a plain-text body rather than a Status."""
    resp = text(429, TOO_MANY_REQUESTS_MESSAGE + "\n")
    resp.headers.append(("retry-after", retry_after))
    return resp


def is_mutating(req: Request) -> bool:
    return req.info is None or req.info.verb not in NON_MUTATING_VERBS


class _Slots:
    """The requests of one kind in flight; `limit` 0 means unlimited."""

    def __init__(self, limit: int):
        self.limit = limit
        self.in_use = 0


def with_max_in_flight_limit(handler: Handler, non_mutating_limit: int, mutating_limit: int) -> Handler:
    if non_mutating_limit == 0 and mutating_limit == 0:
        return handler
    read_only, mutating = _Slots(non_mutating_limit), _Slots(mutating_limit)

    async def limited(req: Request) -> Response:
        if is_long_running(req):
            return await handler(req)
        slots = mutating if is_mutating(req) else read_only
        if slots.limit == 0:
            return await handler(req)
        if slots.in_use >= slots.limit:
            if req.user is not None and SYSTEM_PRIVILEGED_GROUP in req.user.groups:
                return await handler(req)
            return too_many_requests("1")
        slots.in_use += 1
        try:
            return await handler(req)
        finally:
            slots.in_use -= 1

    return limited
