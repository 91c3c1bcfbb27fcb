"""bootstrapsigner and tokencleaner (off by default, as in kube-controller-manager): kube-public/cluster-info
signed for each signing bootstrap token, as kubeadm join checks it, and expired token Secrets deleted."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest

from conftest import Server, wait_for
from kube_apiserver.controllers.bootstrap import detached_signature

CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
SECRETS = "/api/v1/namespaces/kube-system/secrets"
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters:\n- name: ''\n  cluster: {server: 'https://10.0.0.1:6443'}\n"


def _token(token_id: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
            "stringData": {"token-id": token_id, "token-secret": "0123456789abcdef",
                           "usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true", **data}}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("bootstrap-controllers")),
                    ["--controllers=bootstrapsigner,tokencleaner"]).start()
    yield server
    server.stop()


def _data(server: Server) -> dict:
    return server.request("GET", CLUSTER_INFO).json().get("data") or {}


def test_cluster_info_is_signed_for_each_signing_token(server):
    cluster_info = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "cluster-info", "namespace": "kube-public"}, "data": {"kubeconfig": KUBECONFIG}}
    assert server.request("POST", CLUSTER_INFO.rsplit("/", 1)[0], cluster_info).status == 201
    assert server.request("POST", SECRETS, _token("abcdef")).status == 201
    signature = detached_signature(KUBECONFIG, "abcdef", "0123456789abcdef")
    wait_for(lambda: _data(server).get("jws-kubeconfig-abcdef") == signature)
    assert server.request("DELETE", f"{SECRETS}/bootstrap-token-abcdef").status == 200
    wait_for(lambda: "jws-kubeconfig-abcdef" not in _data(server))
    assert _data(server) == {"kubeconfig": KUBECONFIG}


def test_expired_tokens_are_deleted(server):
    soon = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert server.request("POST", SECRETS, _token("expire", expiration=soon)).status == 201
    assert server.request("POST", SECRETS, _token("keeper")).status == 201
    wait_for(lambda: server.request("GET", f"{SECRETS}/bootstrap-token-expire").status == 404, timeout=20)
    assert server.request("GET", f"{SECRETS}/bootstrap-token-keeper").status == 200


def test_off_by_default(tmp_path):
    from kube_apiserver.controllers.names import enabled
    assert not enabled(["*"], "bootstrapsigner") and not enabled(["*"], "tokencleaner")
    assert enabled(["*", "bootstrapsigner"], "bootstrapsigner")
    assert enabled(["token-cleaner-controller"], "tokencleaner")
