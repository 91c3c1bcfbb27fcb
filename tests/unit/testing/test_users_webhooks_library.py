"""kube_apiserver.testing users and webhooks without a server: certificates, answers, the client CA lookup."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
from types import SimpleNamespace

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from kube_apiserver.testing.certs import CertificateAuthority
from kube_apiserver.testing.users import _client_ca_of, client_ca_args, create_user, grant, load_client_ca
from kube_apiserver.testing.webhooks import (
    WebhookServer,
    admission_response,
    conversion_response,
    deny,
    patch,
)


def test_client_certificate_names_user_and_groups(tmp_path):
    args = client_ca_args(str(tmp_path))
    assert args == ["--client-ca-file", str(tmp_path / "client-ca.crt")]
    ca = load_client_ca(str(tmp_path))
    assert ca.cert_pem == (tmp_path / "client-ca.crt").read_bytes()  # loaded, not generated anew
    cert_pem, _ = ca.issue("alice", ("dev", "qa"), client=True)
    subject = x509.load_pem_x509_certificate(cert_pem).subject
    assert subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    assert [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["dev", "qa"]
    assert oct((tmp_path / "client-ca.key").stat().st_mode & 0o777) == "0o600"


def test_admission_answers():
    assert admission_response("u1", None)["response"] == {"allowed": True, "uid": "u1"}
    assert admission_response("u1", False)["response"] == {"allowed": False, "uid": "u1"}
    denied = admission_response("u2", deny("no", code=422))
    assert denied["kind"] == "AdmissionReview" and denied["apiVersion"] == "admission.k8s.io/v1"
    assert denied["response"] == {"allowed": False, "status": {"code": 422, "message": "no"}, "uid": "u2"}
    ops = [{"op": "add", "path": "/metadata/labels/x", "value": "y"}]
    for answer in (patch(ops), ops):
        response = admission_response("u3", answer)["response"]
        assert response["patchType"] == "JSONPatch" and json.loads(base64.b64decode(response["patch"])) == ops
    with pytest.raises(TypeError):
        admission_response("u4", "allowed")


def test_conversion_answers_success_and_failure():
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c1",
            "desiredAPIVersion": "g/v2",
            "objects": [{"apiVersion": "g/v1", "spec": {}}],
        },
    }
    ok = conversion_response(review, lambda obj, desired: {**obj, "spec": {"v": 2}})["response"]
    assert ok == {
        "uid": "c1",
        "result": {"status": "Success"},
        "convertedObjects": [{"apiVersion": "g/v2", "spec": {"v": 2}}],
    }

    def broken(obj: dict, desired: str) -> dict:
        raise ValueError("cannot convert")

    failed = conversion_response(review, broken)["response"]
    assert failed == {"uid": "c1", "result": {"status": "Failure", "message": "cannot convert"}}


def test_webhook_server_serves_https_for_loopback_names():
    hooks = WebhookServer()
    try:
        hooks.routes["/echo"] = lambda body: {"got": body}
        context = ssl.create_default_context(cadata=hooks.ca_pem.decode())
        for host in ("127.0.0.1", "localhost"):
            conn = http.client.HTTPSConnection(host, hooks.port, context=context, timeout=10)
            conn.request("POST", "/echo", body=b'{"a": 1}', headers={"Content-Type": "application/json"})
            assert json.loads(conn.getresponse().read()) == {"got": {"a": 1}}
            conn.close()
        assert hooks.count("/echo") == 2
    finally:
        hooks.stop()


def test_certificate_authority_round_trip(tmp_path):
    ca = CertificateAuthority.generate("test-ca")
    ca.write(str(tmp_path / "ca.crt"), str(tmp_path / "ca.key"))
    assert CertificateAuthority.load(str(tmp_path / "ca.crt"), str(tmp_path / "ca.key")).cert == ca.cert


def test_client_ca_found_from_the_server(tmp_path):
    client_ca_args(str(tmp_path))
    cert = str(tmp_path / "client-ca.crt")
    for server in (
        SimpleNamespace(client_ca_dir=str(tmp_path)),
        SimpleNamespace(args=["--client-ca-file", cert]),
        SimpleNamespace(args=[f"--client-ca-file={cert}"]),
    ):
        assert _client_ca_of(server).cert_pem == (tmp_path / "client-ca.crt").read_bytes()
    assert _client_ca_of(SimpleNamespace(args=["--client-ca-file", "/nonexistent/ca.crt"])) is None


def test_groups_given_as_a_string_are_refused():
    with pytest.raises(TypeError):
        create_user(SimpleNamespace(), "alice", groups="dev")


class _AggregatingServer:
    """A server whose aggregated ClusterRole `view` is empty for its first reads, as after a start."""

    def __init__(self) -> None:
        self.reads = 0
        self.reviews: list[dict] = []

    def request(self, method: str, path: str, body=None, headers=None):
        from kube_apiserver.testing.server import Response

        if method == "GET" and path.endswith("/clusterroles/view"):
            self.reads += 1
            rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}] if self.reads > 3 else []
            role = {"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": []}, "rules": rules}
            return Response(200, {}, json.dumps(role).encode())
        if path.endswith("subjectaccessreviews"):
            self.reviews.append(body)
            return Response(201, {}, json.dumps({"status": {"allowed": True}}).encode())
        return Response(201, {}, b"{}")


def test_a_grant_of_an_aggregated_role_waits_for_its_rules():
    server = _AggregatingServer()
    grant(server, "bob", cluster_role="view", namespace="default")
    assert server.reads == 4  # read again until the aggregation controller filled it in
    assert server.reviews[0]["spec"]["resourceAttributes"]["resource"] == "pods"  # then waited for that rule
