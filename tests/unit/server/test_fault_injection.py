"""Fault injection (--enable-testing-endpoints): rules parsed and refused, matched on the request's info and
user, fired by count or seeded probability, answered with Kubernetes' Status for each code, watches cut or
expired after N events, and storage writes failed at the commit."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.endpoints.http import Request, Response, StreamingResponse
from kube_apiserver.endpoints.request_info import new_request_info
from kube_apiserver.registry.context import UserInfo
from kube_apiserver.server.filters.faults import FaultInjector, RuleError, parse_rule, with_fault_injection
from kube_apiserver.storage.faults import ETCD_TIMEOUT_MESSAGE, FaultingKV, WriteFault, failing_writes
from kube_apiserver.storage.kv import TxnResult

EXEMPT = "/debug/testing/"


def request(method: str, path: str, query: str = "", user: str = "alice") -> Request:
    req = Request(method, path, query.encode(), {})
    req.info = new_request_info(method, path, req.query)
    req.user = UserInfo(user, "", ["system:authenticated"])
    return req


async def ok(_req: Request) -> Response:
    return Response(200, b"{}")


def serve(injector: FaultInjector, req: Request) -> Response:
    return asyncio.run(with_fault_injection(ok, injector, EXEMPT)(req))


def status_of(injector: FaultInjector, req: Request) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as err:
        serve(injector, req)
    return err.value


CM = "/api/v1/namespaces/default/configmaps/a"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"resource": "configmaps"}, "needs an action"),
        ({"status": 418}, "status: must be one of"),
        ({"status": 409, "watch": "drop"}, "only one of status, watch and failWrite"),
        ({"watch": "cut"}, "watch: must be one of"),
        ({"watch": "drop", "verb": "get"}, "watch requests only"),
        ({"failWrite": True, "verb": "list"}, "writes only"),
        ({"status": 500, "count": 0}, "count: must be an integer of at least 1"),
        ({"status": 500, "probability": 1.5}, "probability: must be in (0, 1]"),
        ({"status": 500, "verb": 3}, "verb: must be a string"),
        ({"latencySeconds": -1}, "latencySeconds: must be between"),
        ({"status": 500, "colour": "red"}, "unknown fields: colour"),
        ([], "must be a JSON object"),
    ],
)
def test_a_bad_rule_is_refused_with_the_reason(body: object, message: str) -> None:
    with pytest.raises(RuleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_rule("fault-1", body)


def test_a_rule_matches_only_what_it_names() -> None:
    injector = FaultInjector()
    injector.add(
        {"verb": "update", "resource": "configmaps", "namespace": "default", "user": "alice", "status": 500}
    )
    assert serve(injector, request("PUT", CM, user="bob")).status == 200
    assert serve(injector, request("GET", CM)).status == 200
    assert serve(injector, request("PUT", "/api/v1/namespaces/other/configmaps/a")).status == 200
    assert serve(injector, request("PUT", "/api/v1/namespaces/default/secrets/a")).status == 200
    assert status_of(injector, request("PUT", CM)).code == 500


def test_the_core_group_and_a_subresource_are_matched_exactly() -> None:
    injector = FaultInjector()
    injector.add({"group": "", "resource": "pods", "subresource": "status", "status": 500})
    assert serve(injector, request("PUT", "/api/v1/namespaces/d/pods/p")).status == 200
    assert serve(injector, request("PUT", "/apis/example.com/v1/namespaces/d/pods/p/status")).status == 200
    assert status_of(injector, request("PUT", "/api/v1/namespaces/d/pods/p/status")).code == 500


def test_a_count_applies_the_rule_that_many_times() -> None:
    injector = FaultInjector()
    rule = injector.add({"verb": "update", "status": 409, "count": 2})
    codes = []
    for _ in range(4):
        try:
            codes.append(serve(injector, request("PUT", CM)).status)
        except errors.StatusError as err:
            codes.append(err.code)
    assert codes == [409, 409, 200, 200]
    assert rule.to_dict()["applied"] == 2 and rule.to_dict()["remaining"] == 0


def fired_pattern(seed: int) -> list[bool]:
    injector = FaultInjector()
    injector.add({"verb": "get", "status": 500, "probability": 0.5, "seed": seed})
    fired = []
    for _ in range(40):
        try:
            serve(injector, request("GET", CM))
            fired.append(False)
        except errors.StatusError:
            fired.append(True)
    return fired


def test_a_probability_with_a_seed_fires_the_same_requests_every_run() -> None:
    first = fired_pattern(7)
    assert first == fired_pattern(7)
    assert any(first) and not all(first)
    assert first != fired_pattern(8)


def test_each_code_is_answered_with_kubernetes_status() -> None:
    injector = FaultInjector()
    for code in (409, 410, 429, 500, 503, 504):
        injector.clear()
        injector.add({"status": code, "retryAfterSeconds": 3} if code == 429 else {"status": code})
        err = status_of(injector, request("PUT", CM, query="resourceVersion=5"))
        assert err.code == code
        status = err.status()
        assert status["kind"] == "Status" and status["status"] == "Failure"
        if code == 409:
            assert status["reason"] == "Conflict"
            assert status["message"] == (
                'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply '
                "your changes to the latest version and try again"
            )
            assert status["details"] == {"name": "a", "kind": "configmaps"}
        if code == 410:
            assert status["reason"] == "Expired" and status["message"] == "too old resource version: 5 (6)"
        if code == 429:
            assert status["reason"] == "TooManyRequests" and status["details"] == {"retryAfterSeconds": 3}
        if code == 500:
            assert status["reason"] == "InternalError"
        if code == 504:
            assert status["reason"] == "Timeout"


def test_testing_endpoints_and_non_resource_requests_are_never_faulted() -> None:
    injector = FaultInjector()
    injector.add({"status": 500})
    assert serve(injector, request("GET", "/debug/testing/faults")).status == 200
    assert serve(injector, request("GET", "/healthz")).status == 200


def test_an_injected_fault_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    injector = FaultInjector()
    injector.add({"verb": "update", "status": 409})
    with caplog.at_level(logging.INFO, logger="kube_apiserver"):
        status_of(injector, request("PUT", CM))
    assert (
        'Injected fault rule="fault-1" verb="update" URI="/api/v1/namespaces/default/configmaps/a"'
        in caplog.text
    )
    assert 'user="alice" fault="status 409"' in caplog.text


def test_latency_delays_then_serves() -> None:
    injector = FaultInjector()
    injector.add({"latencySeconds": 0.01, "count": 1})
    assert serve(injector, request("GET", CM)).status == 200
    assert injector.rules["fault-1"].applied == 1


def watch_stream(injector: FaultInjector, events: int) -> list[dict]:
    async def events_source() -> AsyncIterator[bytes]:
        for i in range(events):
            yield json.dumps({"type": "ADDED", "object": {"n": i}}).encode() + b"\n"

    async def watch(_req: Request) -> Response:
        return StreamingResponse(200, events_source(), "application/json")

    async def run() -> list[bytes]:
        req = request("GET", "/api/v1/namespaces/default/configmaps", query="watch=true")
        resp = await with_fault_injection(watch, injector, EXEMPT)(req)
        assert isinstance(resp, StreamingResponse)
        return [chunk async for chunk in resp.chunks]

    return [json.loads(chunk) for chunk in asyncio.run(run())]


def test_a_dropped_watch_ends_after_n_events() -> None:
    injector = FaultInjector()
    injector.add({"watch": "drop", "afterEvents": 2})
    assert [e["object"]["n"] for e in watch_stream(injector, 5)] == [0, 1]
    injector.clear()
    injector.add({"watch": "drop"})
    assert watch_stream(injector, 5) == []


def test_an_expired_watch_ends_with_a_410_error_event() -> None:
    injector = FaultInjector()
    injector.add({"watch": "expire", "afterEvents": 1})
    events = watch_stream(injector, 5)
    assert [e["type"] for e in events] == ["ADDED", "ERROR"]
    assert events[1]["object"]["code"] == 410 and events[1]["object"]["reason"] == "Expired"


class MemoryKV:
    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        self.data[key] = value
        return TxnResult(True, 1, None)

    async def current_revision(self) -> int:
        return 1


def test_a_failing_write_is_refused_at_the_commit_and_nothing_is_written() -> None:
    inner = MemoryKV()
    kv = FaultingKV(inner)  # type: ignore[arg-type]

    async def run() -> None:
        with failing_writes(WriteFault()), pytest.raises(errors.StatusError) as err:
            await kv.create("/registry/configmaps/default/a", b"{}")
        assert err.value.code == 500 and err.value.message == ETCD_TIMEOUT_MESSAGE
        assert err.value.status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": ETCD_TIMEOUT_MESSAGE, "code": 500}  # fmt: skip
        assert inner.data == {}
        await kv.create("/registry/configmaps/default/b", b"{}")  # another request's write
        assert await kv.current_revision() == 1

    asyncio.run(run())
    assert list(inner.data) == ["/registry/configmaps/default/b"]


def test_a_fail_write_rule_fails_the_requests_commit(caplog: pytest.LogCaptureFixture) -> None:
    inner = MemoryKV()
    kv = FaultingKV(inner)  # type: ignore[arg-type]
    injector = FaultInjector()
    injector.add({"verb": "create", "failWrite": True})

    async def creating(_req: Request) -> Response:
        await kv.create("/registry/configmaps/default/a", b"{}")
        return Response(201, b"{}")

    req = request("POST", "/api/v1/namespaces/default/configmaps")
    with caplog.at_level(logging.INFO, logger="kube_apiserver"), pytest.raises(errors.StatusError) as err:
        asyncio.run(with_fault_injection(creating, injector, EXEMPT)(req))
    assert err.value.code == 500 and inner.data == {}
    assert 'rule="fault-1" failed the storage write of key="/registry/configmaps/default/a"' in caplog.text
