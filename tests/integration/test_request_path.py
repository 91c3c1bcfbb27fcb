"""The request path's shortcuts answer as the slow paths did; the client address is the TCP peer's."""

from __future__ import annotations

from tests.integration.test_proxy_subresources import NS, backend, make_pod  # noqa: F401 - backend: a fixture


def test_x_forwarded_for_from_a_loopback_client_is_not_the_client_address(server, backend):  # noqa: F811
    # Go's ReverseProxy appends req.RemoteAddr, the peer: a header the client sent does not replace it.
    ip, port = backend
    make_pod(server, "forwarded", ip, port)
    got = server.request("GET", f"{NS}/pods/forwarded/proxy/x", headers={"X-Forwarded-For": "203.0.113.9"})
    assert got.status == 200, got.body
    assert got.json()["headers"]["x-forwarded-for"] == "203.0.113.9, 127.0.0.1"


def test_get_without_a_query_and_with_one(server):
    created = server.request("POST", f"{NS}/configmaps", {"metadata": {"name": "rp"}, "data": {"a": "b"}})
    assert created.status == 201, created.body
    plain = server.request("GET", f"{NS}/configmaps/rp")
    assert (plain.status, plain.json()["data"], "warning" not in plain.headers) == (200, {"a": "b"}, True)
    pretty = server.request("GET", f"{NS}/configmaps/rp?pretty=true")
    assert pretty.body.startswith(b"{\n") and pretty.json() == plain.json()
