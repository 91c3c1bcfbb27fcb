"""The CertificateApproval, CertificateSigning and CertificateSubjectRestriction admission plugins:
approving and signing need `approve` and `sign` on the signer (by name or `<domain>/*`), and no CSR for
the kube-apiserver-client signer may ask for system:masters."""

from __future__ import annotations

import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import Server

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def request_pem(organization: str | None = None) -> str:
    names = [x509.NameAttribute(NameOID.COMMON_NAME, "alice")]
    if organization:
        names.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def csr(name: str, signer: str = "example.com/signer", organization: str | None = None) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": request_pem(organization), "signerName": signer, "usages": ["client auth"]}}


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("csr-admission")
    (data / "tokens.csv").write_text("alice-token,alice,1001\n")
    srv = Server(str(data), ["--authorization-mode=RBAC", "--token-auth-file", str(data / "tokens.csv")]).start()
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "csr-editor"},
            "rules": [{"apiGroups": ["certificates.k8s.io"], "verbs": ["create", "get", "update"],
                       "resources": ["certificatesigningrequests", "certificatesigningrequests/approval",
                                     "certificatesigningrequests/status"]}]}
    bind = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "alice-csr"}, "subjects": [{"kind": "User", "name": "alice"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csr-editor"}}
    assert srv.request("POST", f"{RBAC}/clusterroles", role).status == 201
    assert srv.request("POST", f"{RBAC}/clusterrolebindings", bind).status == 201
    yield srv
    srv.stop()


def approve(server, name: str, token: str) -> object:
    current = server.request("GET", f"{CSRS}/{name}").json()
    current["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]}
    return server.request("PUT", f"{CSRS}/{name}/approval", current, token=token)


def test_approval_needs_approve_on_the_signer(rbac_server):
    assert rbac_server.request("POST", CSRS, csr("c1"), token="alice-token").status == 201
    refused = approve(rbac_server, "c1", "alice-token")
    assert refused.status == 403
    assert refused.json()["message"] == ('certificatesigningrequests.certificates.k8s.io "c1" is forbidden: user not '
                                         'permitted to approve requests with signerName "example.com/signer"')
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "approver"},
            "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
                       "resourceNames": ["example.com/*"]}]}
    bind = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "alice-approver"}, "subjects": [{"kind": "User", "name": "alice"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "approver"}}
    assert rbac_server.request("POST", f"{RBAC}/clusterroles", role).status == 201
    assert rbac_server.request("POST", f"{RBAC}/clusterrolebindings", bind).status == 201
    assert approve(rbac_server, "c1", "alice-token").status == 200


def test_signing_needs_sign_on_the_signer(rbac_server):
    assert rbac_server.request("POST", CSRS, csr("c2"), token="alice-token").status == 201
    assert approve(rbac_server, "c2", rbac_server.token).status == 200
    current = rbac_server.request("GET", f"{CSRS}/c2").json()
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    import datetime
    now = datetime.datetime.now(datetime.UTC)
    cert = x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key()) \
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1)) \
        .sign(key, hashes.SHA256())
    current["status"]["certificate"] = base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()
    refused = rbac_server.request("PUT", f"{CSRS}/c2/status", current, token="alice-token")
    assert refused.status == 403
    assert refused.json()["message"].endswith('user not permitted to sign requests with signerName '
                                              '"example.com/signer"')
    assert rbac_server.request("PUT", f"{CSRS}/c2/status", current).status == 200  # system:masters


def test_system_masters_is_refused_for_the_client_signer(rbac_server):
    refused = rbac_server.request("POST", CSRS, csr("c3", "kubernetes.io/kube-apiserver-client", "system:masters"))
    assert refused.status == 403
    assert refused.json()["message"] == ('certificatesigningrequests.certificates.k8s.io "c3" is forbidden: use of '
                                         'kubernetes.io/kube-apiserver-client signer with system:masters group is '
                                         'not allowed')
    other = csr("c4", "kubernetes.io/kube-apiserver-client", "developers")
    assert rbac_server.request("POST", CSRS, other).status == 201
