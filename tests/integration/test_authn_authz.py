"""--token-auth-file users, and a refusal worded as Kubernetes words it (AlwaysDeny authorizer)."""

from __future__ import annotations

import pytest

from conftest import Server


@pytest.fixture(scope="module")
def deny_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("deny")
    tokens = data / "tokens.csv"
    tokens.write_text('alice-token,alice,1001,"devs,qa"\nroot-token,root,0,system:masters\n')
    srv = Server(str(data), ["--token-auth-file", str(tokens), "--authorization-mode", "AlwaysDeny"]).start()
    yield srv
    srv.stop()


def test_token_file_user_is_refused_with_kubernetes_wording(deny_server):
    r = deny_server.request("GET", "/api/v1/namespaces/default/configmaps", token="alice-token")
    assert r.status == 403
    assert r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in '
                   'the namespace "default": Everything is forbidden.',
        "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403}
    one = deny_server.request("GET", "/api/v1/namespaces/default/configmaps/x", token="alice-token").json()
    assert one["message"].startswith('configmaps "x" is forbidden: User "alice" cannot get resource')
    path = deny_server.request("GET", "/metrics", token="alice-token").json()
    assert path["message"] == 'forbidden: User "alice" cannot get path "/metrics": Everything is forbidden.'


def test_system_masters_and_unknown_tokens(deny_server):
    assert deny_server.request("GET", "/api/v1/namespaces", token="root-token").status == 200
    assert deny_server.request("GET", "/api/v1/namespaces", token="nobody").status == 401
