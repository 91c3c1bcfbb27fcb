"""Serving security: HSTS (--strict-transport-security-directives) and the --profiling debug endpoints, which
are authorized as any non-resource URL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conftest import Server
from kube_apiserver import logs
from kube_apiserver.cmd.options import ServerRunOptions


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("serving")
    tokens = d / "tokens.csv"
    tokens.write_text("jane-token,jane,jane-uid\n")
    server = Server(str(d / "data"), ["--strict-transport-security-directives", "max-age=31536000,includeSubDomains",
                                      "--token-auth-file", str(tokens), "--authorization-mode", "RBAC"]).start()
    yield server
    server.stop()


def test_every_answer_carries_hsts(server):
    for path in ("/api/v1/namespaces", "/api/v1/namespaces/missing", "/healthz"):
        assert server.request("GET", path).headers["strict-transport-security"] == "max-age=31536000; includeSubDomains", path


def test_no_hsts_without_the_flag(tmp_path):
    plain = Server(str(tmp_path)).start()
    try:
        assert "strict-transport-security" not in plain.request("GET", "/healthz").headers
        assert plain.request("GET", "/debug/pprof/").status == 200  # profiling is on by default
    finally:
        plain.stop()


def test_hsts_flag_errors(tmp_path):
    errors = ServerRunOptions.parse(["--data-dir", str(tmp_path), "--strict-transport-security-directives",
                                     "max-age=1,nonsense"]).complete().validate()
    assert any(e.startswith("--strict-transport-security-directives invalid, allowed values: max-age=expireTime")
               for e in errors)


def test_profiles(server):
    index = server.request("GET", "/debug/pprof/")
    assert index.status == 200 and b'href="goroutine?debug=1"' in index.body
    assert server.request("GET", "/debug/pprof").status == 301
    stacks = server.request("GET", "/debug/pprof/goroutine?debug=2")
    assert stacks.status == 200 and b"asyncio tasks:" in stacks.body and b"thread MainThread" in stacks.body
    assert server.request("GET", "/debug/pprof/heap").status == 200
    profile = server.request("GET", "/debug/pprof/profile?seconds=1")
    assert profile.status == 200 and b"function calls" in profile.body
    assert server.request("GET", "/debug/pprof/profile?seconds=0").status == 400
    assert server.request("GET", "/debug/pprof/nothing").status == 404


def test_the_verbosity_flag(server):
    before = logs.verbosity()
    try:
        put = server.request("PUT", "/debug/flags/v", body=b"3")
        assert (put.status, put.body) == (200, b"successfully set klog.logging.verbosity to 3")
        assert logs.verbosity() == 3
        assert server.request("PUT", "/debug/flags/v", body=b"x").status == 400
        assert server.request("GET", "/debug/flags/v").status == 406
    finally:
        logs.set_verbosity(before)


def test_profiles_are_authorized(server):
    denied = server.request("GET", "/debug/pprof/", token="jane-token")
    assert denied.status == 403
    assert denied.json()["message"] == 'forbidden: User "jane" cannot get path "/debug/pprof/"'
    assert server.request("PUT", "/debug/flags/v", b"9", token="jane-token").status == 403


def test_off_with_profiling_false(tmp_path):
    plain = Server(str(tmp_path), ["--profiling=false"]).start()
    try:
        assert plain.request("GET", "/debug/pprof/").status == 404
        assert plain.request("PUT", "/debug/flags/v", body=b"1").status == 404
    finally:
        plain.stop()
