"""The library side of fault injection and request history, against a fake server: the rule's JSON from
keyword arguments, errors that say what the server refused, and records with assertion helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from kube_apiserver.testing import faults, history


@dataclass
class FakeResponse:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class FakeServer:
    answers: list[FakeResponse]
    sent: list[tuple[str, str, Any]] = field(default_factory=list)

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        self.sent.append((method, path, body))
        return self.answers.pop(0)


def test_inject_sends_the_rule_in_the_servers_terms_and_the_context_manager_removes_it() -> None:
    srv = FakeServer([FakeResponse(201, b'{"id":"fault-3"}'), FakeResponse(200, b"{}")])
    with faults.injected(srv, verb="watch", resource="pods", watch="drop", after_events=2, probability=0.5,
                         seed=1) as rule:  # fmt: skip
        assert rule == "fault-3"
    method, path, body = srv.sent[0]
    assert (method, path) == ("POST", "/debug/testing/faults")
    assert json.loads(body) == {"verb": "watch", "resource": "pods", "watch": "drop", "afterEvents": 2,
                                "probability": 0.5, "seed": 1}  # fmt: skip
    assert srv.sent[1][:2] == ("DELETE", "/debug/testing/faults/fault-3")


def test_a_refused_rule_raises_with_the_servers_message() -> None:
    status = {"kind": "Status", "code": 400, "message": "invalid fault rule: status: must be one of 409"}
    srv = FakeServer([FakeResponse(400, json.dumps(status).encode())])
    with pytest.raises(faults.FaultError, match="inject fault: 400 invalid fault rule") as err:
        faults.inject(srv, status=418)
    assert err.value.status == 400


def record(sequence: int, verb: str, status: int = 200, body: str = "") -> dict[str, Any]:
    return {"sequence": sequence, "time": 0.0, "user": "ctrl", "groups": [], "verb": verb, "group": "apps",
            "version": "v1", "resource": "deployments", "subresource": "status", "namespace": "ns", "name": "d",
            "method": "PATCH", "path": "/apis/apps/v1/namespaces/ns/deployments/d/status", "query": "",
            "status": status, "requestBody": body, "responseBody": "", "requestBodyTruncated": False,
            "responseBodyTruncated": False, "streaming": False}  # fmt: skip


def test_requests_become_records_with_assertion_helpers() -> None:
    items = [record(4, "patch", body='{"status":{"replicas":3}}'), record(5, "get"), record(6, "patch", 409)]
    srv = FakeServer([FakeResponse(200, json.dumps({"lastSequence": 6, "items": items}).encode())])
    found = history.requests(srv, since=3, resource="deployments", subresource="status")
    assert srv.sent[0][1] == "/debug/testing/requests?resource=deployments&subresource=status&since=3"
    assert found.verbs() == ["patch", "get", "patch"] and found.statuses() == [200, 200, 409]
    assert found.one(verb="patch", status=200).request_object() == {"status": {"replicas": 3}}
    with pytest.raises(AssertionError, match="exactly one request matching {'verb': 'patch'}, found 2"):
        found.one(verb="patch")
    assert str(found[0]) == "#4 ctrl patch ns/deployments/d/status -> 200"
    with pytest.raises(TypeError, match="unknown filters"):
        history.requests(srv, colour="red")
