"""Serving flags that used to be accepted and do nothing: --tls-min-version, --tls-cipher-suites,
--cors-allowed-origins, --shutdown-send-retry-after and --shutdown-watch-termination-grace-period."""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterator

import pytest

from conftest import Server


def handshake(server: Server, maximum: ssl.TLSVersion) -> tuple[str, str]:
    """(TLS version, cipher) a client capped at `maximum` gets."""
    ctx = ssl.create_default_context(cafile=server.ca_file)
    ctx.maximum_version = maximum
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as conn,
    ):
        return conn.version() or "", conn.cipher()[0]


@pytest.fixture(scope="module")
def tls13(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(str(tmp_path_factory.mktemp("tls13")), ["--tls-min-version=VersionTLS13"]).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def chacha_cors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        str(tmp_path_factory.mktemp("chacha")),
        [
            "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            r"--cors-allowed-origins=//example\.com(:|$),^https://app\.test$",
        ],
    ).start()
    yield srv
    srv.stop()


def test_tls_min_version_refuses_older_clients(tls13):
    assert handshake(tls13, ssl.TLSVersion.TLSv1_3)[0] == "TLSv1.3"
    with pytest.raises(ssl.SSLError):
        handshake(tls13, ssl.TLSVersion.TLSv1_2)


def test_tls_cipher_suites_are_the_only_tls12_suites(chacha_cors):
    assert handshake(chacha_cors, ssl.TLSVersion.TLSv1_2) == ("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305")
    assert handshake(chacha_cors, ssl.TLSVersion.TLSv1_3)[0] == "TLSv1.3"  # 1.3 suites are not configurable


def test_cors_preflight_and_headers(chacha_cors):
    preflight = chacha_cors.request(
        "OPTIONS", "/api/v1/namespaces", token=None, headers={"Origin": "https://example.com"}
    )
    assert preflight.status == 204
    assert preflight.headers["access-control-allow-origin"] == "https://example.com"
    assert preflight.headers["access-control-allow-credentials"] == "true"
    listed = chacha_cors.request("GET", "/api/v1/namespaces", headers={"Origin": "https://app.test"})
    assert listed.status == 200 and listed.headers["access-control-allow-origin"] == "https://app.test"
    assert listed.headers["access-control-expose-headers"] == "Date"
    other = chacha_cors.request("GET", "/api/v1/namespaces", headers={"Origin": "https://example.org"})
    assert other.status == 200 and "access-control-allow-origin" not in other.headers


def _get(server: Server, path: str) -> tuple[int, dict[str, str]] | None:
    """One request on a fresh connection; None once the server no longer listens."""
    ctx = ssl.create_default_context(cafile=server.ca_file)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {server.token}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def test_shutdown_answers_retry_after_while_watches_drain(tmp_path):
    """With --shutdown-send-retry-after the server keeps listening while the in-flight requests and, within
    --shutdown-watch-termination-grace-period, the open watches end (spread at 200 a second at least):
    meanwhile new requests get 429 Retry-After: 5 and Connection: close, and the watches end cleanly."""
    srv = Server(
        str(tmp_path), ["--shutdown-send-retry-after", "--shutdown-watch-termination-grace-period=30s"]
    )
    srv.start()
    ctx = ssl.create_default_context(cafile=srv.ca_file)
    watches = []
    for _ in range(100):
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx, timeout=30)
        conn.request(
            "GET",
            "/api/v1/namespaces/default/configmaps?watch=1",
            headers={"Authorization": f"Bearer {srv.token}"},
        )
        resp = conn.getresponse()
        assert resp.status == 200
        watches.append(resp)
    assert srv._loop is not None and srv._stop is not None
    srv._loop.call_soon_threadsafe(srv._stop.set)
    answers = []
    while (answer := _get(srv, "/api/v1/namespaces")) is not None:
        answers.append(answer)
        if answer[0] == 429:
            break
    for watch in watches:
        assert all(b'"type":"ADDED"' in line for line in watch.read().splitlines() if line)  # no ERROR event
    srv.stop()
    assert answers and answers[-1][0] == 429, answers
    assert (answers[-1][1]["retry-after"], answers[-1][1]["connection"]) == ("5", "close")


def test_request_timeout_is_a_go_duration(server):
    """client-go writes ?timeout= with Go's Duration.String (90 s is "1m30s")."""
    assert server.request("GET", "/api/v1/namespaces?timeout=1m30s").status == 200
    refused = server.request("GET", "/api/v1/namespaces?timeout=90")
    assert refused.status == 400
    assert refused.json()["message"] == (
        'invalid timeout specified in the request URL - time: missing unit in duration "90"'
    )
