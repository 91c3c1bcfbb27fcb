"""Overload protection of the real server: API Priority and Fairness (the default) and, with it disabled,
the max-in-flight limits. A request holds its seat while the test withholds the last byte of its body, so
the flood that follows meets a full level deterministically (nothing here depends on timing)."""

from __future__ import annotations

import json
import select
import socket
import ssl
from collections.abc import Iterator

import pytest

from conftest import Response, Server, wait_for

GV = "/apis/flowcontrol.apiserver.k8s.io/v1"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TOO_MANY = b"Too many requests, please try again later.\n"


def as_user(name: str) -> dict[str, str]:
    return {"Impersonate-User": name}  # the admin impersonates: flow control classifies the impersonated user


class HeldRequest:
    """A create whose body lacks its last byte: it has passed flow control and waits for the rest."""

    def __init__(self, server: Server, user: str, name: str):
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).encode()
        ctx = ssl.create_default_context(cafile=server.ca_file)
        self.sock = ctx.wrap_socket(
            socket.create_connection(("127.0.0.1", server.port), timeout=30), server_hostname="127.0.0.1"
        )
        head = (
            f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.token}\r\n"
            f"Impersonate-User: {user}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.sock.sendall(head.encode() + body[:-1])
        self.rest = body[-1:]

    def answered(self) -> bool:
        """Whether the server answered before the body ended: it was refused (429), not held."""
        return bool(self.sock.pending() or select.select([self.sock], [], [], 0)[0])

    def finish(self) -> int:
        self.sock.sendall(self.rest)
        status_line = self.sock.recv(65536).split(b"\r\n", 1)[0]
        self.sock.close()
        return int(status_line.split()[1])


def executing(server: Server, level: str) -> int:
    dump = server.request("GET", "/debug/api_priority_and_fairness/dump_priority_levels").body.decode()
    for line in dump.splitlines()[1:]:
        cells = [cell.strip() for cell in line.split(",")]
        if cells[0] == level:
            return int(cells[5])
    return -1


@pytest.fixture(scope="module")
def tiny_level(server: Server) -> Iterator[dict[str, str]]:
    """A priority level with no share of the concurrency limit (so one request at a time, then rejections)
    and the FlowSchema sending the users apf-holder and apf-flooder to it."""
    level = server.request(
        "POST",
        f"{GV}/prioritylevelconfigurations",
        {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "apf-tiny"},
            "spec": {
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 0,
                    "borrowingLimitPercent": 0,
                    "limitResponse": {"type": "Reject"},
                },
            },
        },
    )
    assert level.status == 201, level.body
    schema = server.request(
        "POST",
        f"{GV}/flowschemas",
        {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema",
            "metadata": {"name": "apf-flood"},
            "spec": {
                "priorityLevelConfiguration": {"name": "apf-tiny"},
                "matchingPrecedence": 100,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [
                    {
                        "subjects": [
                            {"kind": "User", "user": {"name": "apf-holder"}},
                            {"kind": "User", "user": {"name": "apf-flooder"}},
                        ],
                        "resourceRules": [
                            {
                                "verbs": ["*"],
                                "apiGroups": ["*"],
                                "resources": ["*"],
                                "namespaces": ["*"],
                                "clusterScope": True,
                            }
                        ],
                    }
                ],
            },
        },
    )
    assert schema.status == 201, schema.body
    uids = {"flowschema": schema.json()["metadata"]["uid"], "prioritylevel": level.json()["metadata"]["uid"]}

    def classified() -> bool:  # once the server's informers have the new objects
        resp = server.request("GET", CONFIGMAPS, headers=as_user("apf-flooder"))
        return resp.headers.get("x-kubernetes-pf-flowschema-uid") == uids["flowschema"]

    wait_for(classified)
    yield uids
    server.request("DELETE", f"{GV}/flowschemas/apf-flood")
    server.request("DELETE", f"{GV}/prioritylevelconfigurations/apf-tiny")


def test_flood_from_one_flow_is_rejected_while_others_are_served(
    server: Server, tiny_level: dict[str, str]
) -> None:
    held = HeldRequest(server, "apf-holder", "apf-held")
    wait_for(lambda: executing(server, "apf-tiny") == 1)
    flood = [server.request("GET", CONFIGMAPS, headers=as_user("apf-flooder")) for _ in range(10)]
    assert [resp.status for resp in flood] == [429] * 10
    rejected = flood[0]
    assert rejected.body == TOO_MANY
    assert rejected.headers["retry-after"] == "1"
    assert rejected.headers["x-kubernetes-pf-flowschema-uid"] == tiny_level["flowschema"]
    assert rejected.headers["x-kubernetes-pf-prioritylevel-uid"] == tiny_level["prioritylevel"]
    other = server.request("GET", CONFIGMAPS, headers=as_user("apf-bystander"))
    assert other.status == 200
    assert other.headers["x-kubernetes-pf-flowschema-uid"] not in ("", tiny_level["flowschema"])
    masters = server.request("GET", CONFIGMAPS)
    assert masters.status == 200
    exempt = server.request("GET", f"{GV}/flowschemas/exempt").json()["metadata"]["uid"]
    assert masters.headers["x-kubernetes-pf-flowschema-uid"] == exempt
    assert held.finish() == 201
    assert server.request("GET", CONFIGMAPS, headers=as_user("apf-flooder")).status == 200
    metrics = server.request("GET", "/metrics").body.decode()
    assert (
        'apiserver_flowcontrol_rejected_requests_total{flow_schema="apf-flood",priority_level="apf-tiny",'
        'reason="concurrency-limit"} 10'
    ) in metrics
    assert (
        'apiserver_flowcontrol_dispatched_requests_total{flow_schema="apf-flood",priority_level="apf-tiny"}'
        in metrics
    )
    assert "apiserver_flowcontrol_current_inqueue_requests" in metrics
    assert "apiserver_flowcontrol_current_executing_requests" in metrics


def test_health_checks_are_exempt_and_dumps_are_served_unlisted(server: Server) -> None:
    readyz = server.request("GET", "/readyz", token=None)
    assert readyz.status == 200 and readyz.headers.get("x-kubernetes-pf-prioritylevel-uid")
    dump = server.request("GET", "/debug/api_priority_and_fairness/dump_priority_levels")
    assert dump.status == 200 and dump.body.startswith(b"PriorityLevelName,")
    assert b"exempt," in dump.body and b"catch-all," in dump.body
    queues = server.request("GET", "/debug/api_priority_and_fairness/dump_queues")
    assert queues.status == 200 and queues.body.startswith(b"PriorityLevelName,")
    assert "/debug/api_priority_and_fairness/dump_queues" not in server.request("GET", "/").json()["paths"]


@pytest.fixture(scope="module")
def max_in_flight_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        str(tmp_path_factory.mktemp("maxinflight")),
        ["--enable-priority-and-fairness=false", "--max-mutating-requests-inflight=1"],
    ).start()
    yield srv
    srv.stop()


def test_max_in_flight_when_priority_and_fairness_is_off(max_in_flight_server: Server) -> None:
    """The held create takes the one mutating slot; the server's own writes (system:masters) take it too
    when it is free, so a holder they beat to it is answered 429 at once and the test holds again."""
    server = max_in_flight_server
    created = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inflight-other"}}

    def rejected() -> Response | None:
        resp = server.request("POST", CONFIGMAPS, created, headers=as_user("apf-writer"))
        return resp if resp.status == 429 else None

    for attempt in range(20):
        held = HeldRequest(server, "apf-holder", f"inflight-held-{attempt}")
        resp = wait_for(lambda: rejected() or held.answered())  # noqa: B023 - this attempt's holder
        if resp is True:  # the server's own write had the slot: the holder was refused; hold again
            assert held.finish() == 429
            continue
        assert resp.body == TOO_MANY and resp.headers["retry-after"] == "1"
        assert "x-kubernetes-pf-flowschema-uid" not in resp.headers
        assert server.request("GET", CONFIGMAPS, headers=as_user("apf-reader")).status == 200  # its own limit
        created["metadata"]["name"] = f"inflight-masters-{attempt}"
        assert server.request("POST", CONFIGMAPS, created).status == 201  # system:masters past the limit
        if held.finish() == 201:
            break
    else:
        raise AssertionError("the held create never kept the mutating slot")
    created["metadata"]["name"] = "inflight-after"
    # the slot is free again (the server's own writes may take it for a moment)
    wait_for(lambda: server.request("POST", CONFIGMAPS, created, headers=as_user("apf-writer")).status == 201)
