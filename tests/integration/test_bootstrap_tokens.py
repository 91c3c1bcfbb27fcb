"""--enable-bootstrap-token-auth: kube-system/bootstrap-token-<id> Secrets authenticate `<id>.<secret>` as
system:bootstrap:<id>, as kubeadm join uses them to ask for its node's client certificate."""

from __future__ import annotations

import base64
import datetime
import http.client
import json
import ssl
from collections.abc import Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Server

SECRETS = "/api/v1/namespaces/kube-system/secrets"


def _secret(token_id: str, token_secret: str, **data: str) -> dict:
    values = {"token-id": token_id, "token-secret": token_secret, "usage-bootstrap-authentication": "true",
              "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token", **data}
    return {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
            "stringData": {k: v for k, v in values.items() if v is not None}}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("bootstrap")), ["--enable-bootstrap-token-auth",
                                                                 "--authorization-mode", "RBAC"]).start()
    past = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for secret in (_secret("abcdef", "0123456789abcdef"), _secret("expire", "0123456789abcdef", expiration=past),
                   _secret("nouse1", "0123456789abcdef", **{"usage-bootstrap-authentication": "false"}),
                   _secret("badgrp", "0123456789abcdef", **{"auth-extra-groups": "system:masters"})):
        assert server.request("POST", SECRETS, secret).status == 201
    # kubeadm's binding: bootstrappers may ask for node client certificates
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "kubeadm:kubelet-bootstrap"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "system:node-bootstrapper"},
               "subjects": [{"kind": "Group", "name": "system:bootstrappers:kubeadm:default-node-token",
                             "apiGroup": "rbac.authorization.k8s.io"}]}
    assert server.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding).status == 201
    yield server
    server.stop()


def _post(server: Server, path: str, body: dict, token: str) -> tuple[int, dict]:
    conn = http.client.HTTPSConnection("127.0.0.1", server.port,
                                       context=ssl.create_default_context(cafile=server.ca_file), timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {token}",
                                                       "Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def _whoami(server: Server, token: str) -> tuple[int, dict]:
    code, body = _post(server, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                       {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, token)
    return code, body["status"]["userInfo"] if code == 201 else body


def test_a_bootstrap_token_is_its_bootstrap_user(server):
    code, user = _whoami(server, "abcdef.0123456789abcdef")
    assert code == 201
    assert user == {"username": "system:bootstrap:abcdef",
                    "groups": ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token",
                               "system:authenticated"]}


@pytest.mark.parametrize("token", ["abcdef.0123456789abcdee", "expire.0123456789abcdef", "nouse1.0123456789abcdef",
                                   "badgrp.0123456789abcdef", "zzzzzz.0123456789abcdef"])
def test_tokens_their_secret_does_not_vouch_for_are_unauthorized(server, token):
    assert _whoami(server, token)[0] == 401


def test_the_bootstrap_user_asks_for_its_node_certificate(server):
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"),
        x509.NameAttribute(NameOID.COMMON_NAME, "system:node:worker-1")])).sign(key, hashes.SHA256())
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"generateName": "csr-"},
            "spec": {"request": base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client-kubelet", "usages": ["client auth"]}}
    code, created = _post(server, "/apis/certificates.k8s.io/v1/certificatesigningrequests", body,
                          "abcdef.0123456789abcdef")
    assert code == 201, created
    assert created["spec"]["username"] == "system:bootstrap:abcdef"


def test_off_without_the_flag(tmp_path):
    plain = Server(str(tmp_path)).start()
    try:
        assert plain.request("POST", SECRETS, _secret("abcdef", "0123456789abcdef")).status == 201
        assert _whoami(plain, "abcdef.0123456789abcdef")[0] == 401
    finally:
        plain.stop()
