"""Request history (--enable-testing-endpoints): each request recorded with its user, info, bodies (cut at the
body limit) and answer, a Status raised inside recorded as answered, bounded by entries and bytes, filtered
and cleared; the testing endpoints themselves are not recorded."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.endpoints.http import Request, Response
from kube_apiserver.endpoints.request_info import new_request_info
from kube_apiserver.registry.context import UserInfo
from kube_apiserver.server.filters.history import RequestHistory, with_request_history

EXEMPT = "/debug/testing/"


def request(method: str, path: str, body: bytes | None = None, user: str = "alice") -> Request:
    req = Request(method, path, b"", {}, body=body)
    req.info = new_request_info(method, path, req.query)
    req.user = UserInfo(user, "", ("system:authenticated",))
    return req


async def echo(req: Request) -> Response:
    body = await req.body()
    if req.method == "DELETE":
        raise errors.not_found("configmaps", "", "gone")
    return Response(201 if req.method == "POST" else 200, body or b'{"kind":"ConfigMap"}')


def serve(history: RequestHistory, req: Request) -> Response:
    return asyncio.run(with_request_history(echo, history, EXEMPT)(req))


def test_a_request_is_recorded_with_its_info_bodies_and_answer() -> None:
    history = RequestHistory()
    body = b'{"metadata":{"name":"made"}}'
    serve(history, request("POST", "/api/v1/namespaces/default/configmaps", body))
    (record,) = history.query()
    item = record.to_dict()
    assert item["user"] == "alice" and item["groups"] == ["system:authenticated"]
    assert (item["verb"], item["group"], item["version"], item["resource"], item["namespace"]) == (
        "create", "", "v1", "configmaps", "default")  # fmt: skip
    assert item["name"] == "made"  # a create's name, from its body
    assert item["requestBody"] == body.decode() and item["status"] == 201
    assert item["responseBody"] == body.decode() and item["sequence"] == 1


def test_a_status_error_is_recorded_as_answered() -> None:
    history = RequestHistory()
    resp = serve(history, request("DELETE", "/api/v1/namespaces/default/configmaps/gone"))
    assert resp.status == 404
    (record,) = history.query()
    assert record.status == 404 and b'"reason":"NotFound"' in record.response_body


def test_large_bodies_are_cut() -> None:
    history = RequestHistory(max_body_bytes=10)
    serve(history, request("PUT", "/api/v1/namespaces/default/configmaps/a", b"x" * 100))
    item = history.query()[0].to_dict()
    assert item["requestBody"] == "x" * 10 and item["requestBodySize"] == 100 and item["requestBodyTruncated"]
    assert item["responseBodyTruncated"]


def test_the_history_is_bounded_by_entries_and_by_bytes() -> None:
    history = RequestHistory(max_entries=3)
    for i in range(5):
        serve(history, request("GET", f"/api/v1/namespaces/default/configmaps/c{i}"))
    assert [r.name for r in history.query()] == ["c2", "c3", "c4"]
    by_bytes = RequestHistory(max_bytes=3000, max_body_bytes=1000)
    for i in range(10):
        serve(by_bytes, request("PUT", f"/api/v1/namespaces/default/configmaps/c{i}", b"y" * 1000))
    assert by_bytes.bytes <= 3000 and [r.name for r in by_bytes.query()] == ["c9"]


def test_queries_filter_on_fields_and_since() -> None:
    history = RequestHistory()
    serve(history, request("GET", "/api/v1/namespaces/default/configmaps/a"))
    serve(history, request("PUT", "/api/v1/namespaces/default/configmaps/a", b"{}", user="bob"))
    serve(history, request("GET", "/api/v1/namespaces/other/secrets/s"))
    assert [r.sequence for r in history.query(user="bob")] == [2]
    assert [r.sequence for r in history.query(verb="get", resource="configmaps")] == [1]
    assert [r.sequence for r in history.query(namespace="other")] == [3]
    assert [r.sequence for r in history.query(since=1)] == [2, 3]
    assert [r.sequence for r in history.query(limit=1)] == [1]
    with pytest.raises(ValueError, match="unknown filters: colour"):
        history.query(colour="red")
    history.clear()
    assert history.query() == [] and history.bytes == 0
    serve(history, request("GET", "/api/v1/namespaces/default/configmaps/a"))
    assert history.query()[0].sequence == 4  # sequences go on after a clear


def test_testing_endpoints_are_not_recorded() -> None:
    history = RequestHistory()
    serve(history, request("GET", "/debug/testing/requests"))
    assert history.query() == []
