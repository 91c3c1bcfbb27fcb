"""csrsigning in the real server, driven by kubectl: a CSR made with
`cryptography` is created from a manifest, `kubectl certificate approve`d, gets a certificate that the
cluster CA (by default the CA the server generated for itself) verifies, and with --client-ca-file of
that CA the certificate authenticates against the server as the CSR's subject. A CSR the signer refuses
shows Failed in `kubectl get csr`; a kubelet's client CSR is approved by csrapproving on its own."""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
from collections.abc import Iterator

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Server, wait_for, with_controllers


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = str(tmp_path_factory.mktemp("csr"))
    ca = os.path.join(data_dir, "pki", "ca.crt")  # generated while the options complete, before validation
    server = Server(
        data_dir, [with_controllers("csrsigning", "csrapproving", "csrcleaner"), f"--client-ca-file={ca}"]
    ).start()
    yield server
    server.stop()


def _key_and_request(cn: str, org: str) -> tuple[ec.EllipticCurvePrivateKey, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org), x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    )
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return key, request.public_bytes(serialization.Encoding.PEM)


def _create(srv: Server, name: str, request: bytes, usages: list[str], signer: str) -> None:
    manifest = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(request).decode(),
            "signerName": signer,
            "usages": usages,
            "expirationSeconds": 86400,
        },
    }
    path = os.path.join(srv.data_dir, f"{name}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(manifest, f)
    srv.kubectl("create", "-f", path)


def _csr(srv: Server, name: str) -> dict:
    return json.loads(srv.kubectl("get", "csr", name, "-o", "json").stdout)


def test_an_approved_csr_gets_a_certificate_that_authenticates(srv: Server, kubectl_available: None) -> None:
    key, request = _key_and_request("alice", "devs")
    _create(
        srv, "alice", request, ["client auth", "digital signature"], "kubernetes.io/kube-apiserver-client"
    )
    assert "Pending" in srv.kubectl("get", "csr", "alice").stdout
    srv.kubectl("certificate", "approve", "alice")
    issued = wait_for(lambda: (_csr(srv, "alice").get("status") or {}).get("certificate"))
    assert "Approved,Issued" in srv.kubectl("get", "csr", "alice").stdout

    pem = base64.b64decode(issued)
    cert = x509.load_pem_x509_certificate(pem)
    with open(srv.ca_file, "rb") as f:
        ca = x509.load_pem_x509_certificate(f.read())
    cert.verify_directly_issued_by(ca)
    assert cert.subject.rfc4514_string() == "CN=alice,O=devs"
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert lifetime.total_seconds() == 86400  # spec.expirationSeconds: a day, backdated 5 minutes

    cert_file, key_file = os.path.join(srv.data_dir, "alice.crt"), os.path.join(srv.data_dir, "alice.key")
    with open(cert_file, "wb") as f:
        f.write(pem)
    with open(key_file, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    ctx = ssl.create_default_context(cafile=srv.ca_file)
    ctx.load_cert_chain(cert_file, key_file)
    conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx, timeout=30)
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    conn.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body=json.dumps(review),
        headers={"Content-Type": "application/json"},
    )
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    assert resp.status == 201, body
    user = body["status"]["userInfo"]
    assert user["username"] == "alice"
    assert set(user["groups"]) == {"devs", "system:authenticated"}


def test_a_request_the_signer_refuses_is_failed(srv: Server, kubectl_available: None) -> None:
    _key, request = _key_and_request("system:node:n1", "devs")  # a kubelet's client CSR must be system:nodes
    _create(
        srv,
        "kubelet",
        request,
        ["digital signature", "client auth"],
        "kubernetes.io/kube-apiserver-client-kubelet",
    )
    srv.kubectl("certificate", "approve", "kubelet")

    def failed() -> dict | None:
        conditions = (_csr(srv, "kubelet").get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "Failed"), None)

    condition = wait_for(failed)
    assert condition["reason"] == "SignerValidationFailure"
    assert condition["message"] == "subject organization is not system:nodes"
    assert "Approved,Failed" in srv.kubectl("get", "csr", "kubelet").stdout
    assert not (_csr(srv, "kubelet").get("status") or {}).get("certificate")


def test_a_kubelet_client_csr_is_auto_approved_and_issued(srv: Server, kubectl_available: None) -> None:
    """csrapproving: the admin may create certificatesigningrequests/nodeclient, so its kubelet client CSR
    is approved without `kubectl certificate approve`, then signed."""
    _key, request = _key_and_request("system:node:n2", "system:nodes")
    _create(
        srv,
        "node-n2",
        request,
        ["digital signature", "client auth"],
        "kubernetes.io/kube-apiserver-client-kubelet",
    )
    issued = wait_for(lambda: (_csr(srv, "node-n2").get("status") or {}).get("certificate"))
    [approved] = [c for c in _csr(srv, "node-n2")["status"]["conditions"] if c["type"] == "Approved"]
    assert approved["reason"] == "AutoApproved"
    assert approved["message"] == "Auto approving kubelet client certificate after SubjectAccessReview."
    cert = x509.load_pem_x509_certificate(base64.b64decode(issued))
    assert cert.subject.rfc4514_string() == "CN=system:node:n2,O=system:nodes"
