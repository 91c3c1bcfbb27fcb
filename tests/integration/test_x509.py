"""--client-ca-file: a verified client certificate is the user (CN) and groups (O)."""

from __future__ import annotations

import datetime
import http.client
import json
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conftest import Server


def _name(cn: str, orgs: tuple[str, ...] = ()) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs)])


def _cert(subject: x509.Name, key, issuer: x509.Name, signer, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _write(path, cert, key=None) -> str:
    data = cert.public_bytes(serialization.Encoding.PEM)
    if key is not None:
        data += key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
    path.write_bytes(data)
    return str(path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("clientpki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert(_name("client-ca"), ca_key, _name("client-ca"), ca_key, ca=True)
    out = {"ca": _write(d / "ca.crt", ca)}
    for user, orgs in (("jane", ("devs",)), ("root", ("system:masters",))):
        key = ec.generate_private_key(ec.SECP256R1())
        out[user] = _write(d / f"{user}.pem", _cert(_name(user, orgs), key, _name("client-ca"), ca_key, False), key)
    rogue_key = ec.generate_private_key(ec.SECP256R1())
    rogue = _cert(_name("rogue", ("system:masters",)), rogue_key, _name("rogue"), rogue_key, ca=False)
    out["rogue"] = _write(d / "rogue.pem", rogue, rogue_key)
    return out


def _get(server: Server, cert: str | None, path: str) -> tuple[int, dict]:
    ctx = ssl.create_default_context(cafile=server.ca_file)
    if cert:
        ctx.load_cert_chain(cert)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=ctx, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    except (ssl.SSLError, ConnectionError):
        return 0, {}
    finally:
        conn.close()


def test_client_certificates(tmp_path, pki):
    server = Server(str(tmp_path), ["--client-ca-file", pki["ca"], "--authorization-mode", "AlwaysDeny"]).start()
    try:
        code, body = _get(server, pki["jane"], "/api/v1/namespaces")
        assert code == 403
        assert body["message"].startswith('namespaces is forbidden: User "jane" cannot list resource "namespaces"')
        assert _get(server, pki["root"], "/api/v1/namespaces")[0] == 200  # O=system:masters
        code, body = _get(server, None, "/api/v1/namespaces")  # anonymous is on with AlwaysDeny, as in k8s
        assert code == 403 and 'User "system:anonymous"' in body["message"]
        assert _get(server, pki["rogue"], "/api/v1/namespaces")[0] in (0, 401)  # not signed by the client CA
        assert server.request("GET", "/api/v1/namespaces").status == 200  # tokens still work
    finally:
        server.stop()
