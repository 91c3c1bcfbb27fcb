"""The request-deadline filter: ?timeout= is Go's time.ParseDuration (client-go sends "1m30s" for 90 s),
an unparsable one is a 400, and only a timeout below the server's own shortens the request."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.endpoints.http import Request, Response
from kube_apiserver.server.filters.timeout import _requested_timeout, with_timeout


def serve(query: str, server_timeout: float, work_seconds: float) -> Response:
    async def slow(_req: Request) -> Response:
        await asyncio.sleep(work_seconds)
        return Response(200, b"{}", "application/json")

    req = Request("GET", "/api/v1/namespaces", query.encode(), {})
    req.info = SimpleNamespace(verb="list", subresource="")
    return asyncio.run(with_timeout(slow, server_timeout)(req))


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1m30s", 90.0), ("30s", 30.0), ("500ms", 0.5), ("1h", 3600.0), ("0", 0.0), ("-5s", -5.0)],
)
def test_timeout_is_a_go_duration(value: str, seconds: float) -> None:
    assert _requested_timeout(value) == seconds


def test_a_composite_timeout_shortens_the_request() -> None:
    with pytest.raises(errors.StatusError) as err:
        serve("timeout=0m0.01s", server_timeout=60, work_seconds=5)
    assert err.value.code == 504


def test_a_timeout_over_the_maximum_or_zero_keeps_the_servers() -> None:
    assert serve("timeout=1m30s", server_timeout=60, work_seconds=0).status == 200
    assert serve("timeout=0s", server_timeout=60, work_seconds=0).status == 200


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", 'invalid timeout specified in the request URL - time: invalid duration "abc"'),
        ("90", 'invalid timeout specified in the request URL - time: missing unit in duration "90"'),
    ],
)
def test_an_unparsable_timeout_is_a_bad_request(value: str, message: str) -> None:
    with pytest.raises(errors.StatusError) as err:
        serve(f"timeout={value}", server_timeout=60, work_seconds=0)
    assert (err.value.code, err.value.reason, err.value.message) == (400, "BadRequest", message)
