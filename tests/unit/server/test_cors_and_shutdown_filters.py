"""The CORS filter (WithCORS) and the shutdown filters (WithRetryAfter, WithWaitGroup,
WithWatchTerminationDuringShutdown) alone, against a handler that records what reached it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace

from kube_apiserver.apimachinery import errors
from kube_apiserver.endpoints.http import Request, Response, StreamingResponse
from kube_apiserver.server.filters.cors import with_cors
from kube_apiserver.server.filters.shutdown import (
    RequestWaitGroup,
    WatchTermination,
    with_retry_after,
    with_wait_group,
    with_watch_termination,
)


def request(
    method: str = "GET", path: str = "/api/v1/namespaces", verb: str = "list", **headers: str
) -> Request:
    req = Request(method, path, b"", {k.replace("_", "-"): v for k, v in headers.items()})
    req.info = SimpleNamespace(verb=verb, subresource="")
    return req


async def ok(req: Request) -> Response:
    return Response(200, b"{}")


def header(resp: Response, name: str) -> str | None:
    return next((v for k, v in resp.headers if k == name), None)


# ---- CORS ----

CORS = [r"//example\.com(:|$)", r"^https://app\.test$"]


def test_an_allowed_origin_gets_the_headers_and_the_response():
    resp = asyncio.run(with_cors(ok, CORS)(request(origin="https://example.com:8443")))
    assert resp.status == 200 and header(resp, "access-control-allow-origin") == "https://example.com:8443"
    assert header(resp, "access-control-allow-methods") == "POST, GET, OPTIONS, PUT, DELETE, PATCH"
    assert header(resp, "access-control-allow-headers") == (
        "Content-Type, Content-Length, Accept-Encoding, "
        "X-CSRF-Token, Authorization, X-Requested-With, "
        "If-Modified-Since"
    )
    assert header(resp, "access-control-expose-headers") == "Date"
    assert header(resp, "access-control-allow-credentials") == "true"


def test_a_preflight_is_answered_before_the_chain():
    async def unauthorized(req: Request) -> Response:
        raise errors.unauthorized()

    resp = asyncio.run(with_cors(unauthorized, CORS)(request("OPTIONS", origin="https://app.test")))
    assert (
        resp.status == 204
        and resp.body == b""
        and header(resp, "access-control-allow-origin") == "https://app.test"
    )
    failed = asyncio.run(with_cors(unauthorized, CORS)(request(origin="https://app.test")))
    assert failed.status == 401 and header(failed, "access-control-allow-origin") == "https://app.test"


def test_other_origins_and_no_patterns_are_left_alone():
    for origin in ("https://example.org", "https://app.test.evil", ""):
        resp = asyncio.run(with_cors(ok, CORS)(request(origin=origin)))
        assert header(resp, "access-control-allow-origin") is None, origin
    assert with_cors(ok, []) is ok


# ---- shutdown ----


def test_retry_after_once_not_accepting_except_probes_and_the_server_itself():
    stopping = asyncio.Event()
    handler = with_retry_after(ok, stopping)
    assert asyncio.run(handler(request())).status == 200
    stopping.set()
    resp = asyncio.run(handler(request()))
    assert (resp.status, resp.body) == (429, b"The apiserver is shutting down, please try again later.\n")
    assert (header(resp, "retry-after"), header(resp, "connection")) == ("5", "close")
    assert header(resp, "content-type") == "text/plain; charset=utf-8"
    for path in ("/readyz", "/livez?verbose", "/healthz/ping", "/metrics"):
        assert asyncio.run(handler(request(path=path.split("?")[0]))).status == 200, path
    assert asyncio.run(handler(request(user_agent="kube-apiserver/v1.34.0 (linux/amd64)"))).status == 200


def test_wait_group_counts_non_long_running_requests_and_refuses_once_waited_for():
    group = RequestWaitGroup()
    seen: list[int] = []

    async def counting(req: Request) -> Response:
        seen.append(group.count)
        return Response(200)

    handler = with_wait_group(counting, group)

    async def scenario() -> tuple[Response, Response, Response]:
        await handler(request())
        await handler(request(verb="watch"))
        await group.wait(1.0)
        return (
            await handler(request()),
            await handler(request(path="/readyz")),
            await handler(request(verb="watch")),
        )

    refused, probe, watch = asyncio.run(scenario())
    assert seen[:2] == [1, 0] and group.count == 0
    assert refused.status == 503 and header(refused, "retry-after") == "1"
    assert (
        b'"message":"apiserver is shutting down"' in refused.body
        and b'"reason":"ServiceUnavailable"' in refused.body
    )
    assert probe.status == 200 and watch.status == 200


def test_watch_ends_are_spread_while_draining():
    termination = WatchTermination()
    ended: list[float] = []

    async def watch(req: Request) -> Response:
        async def chunks() -> AsyncIterator[bytes]:
            yield b"{}\n"

        return StreamingResponse(200, chunks(), "application/json")

    handler = with_watch_termination(watch, termination)

    async def consume(resp: StreamingResponse) -> None:
        async for _ in resp.chunks:
            pass
        ended.append(asyncio.get_running_loop().time())

    async def scenario() -> Response:
        responses = [await handler(request(verb="watch")) for _ in range(30)]
        assert termination.active == 30
        termination.start_draining(0.1)  # 30 in 0.1 s is 300 a second: above the 200 minimum
        await asyncio.gather(*(consume(r) for r in responses))
        await termination.wait(1.0)
        return await handler(request(verb="watch"))

    refused = asyncio.run(scenario())
    assert termination.active == 0 and len(ended) == 30
    gaps = [later - earlier for earlier, later in zip(ended, ended[1:], strict=False)]
    assert all(gap > 0 for gap in gaps)  # one at a time, never together
    assert refused.status == 503


# ---- --livez-grace-period ----


def test_livez_boot_checks_pass_during_the_grace_period():
    from kube_apiserver.server import healthz
    from kube_apiserver.server.generic_api_server import _delayed

    async def unfinished() -> None:
        raise healthz.HealthCheckError("not finished")

    check = healthz.HealthChecker("poststarthook/slow", unfinished)

    async def outcomes() -> tuple[bool, bool]:
        async def passes(checker: healthz.HealthChecker) -> bool:
            try:
                await checker.check()
            except healthz.HealthCheckError:
                return False
            return True

        return await passes(_delayed(check, 3600)), await passes(_delayed(check, 0))

    assert asyncio.run(outcomes()) == (True, False)
