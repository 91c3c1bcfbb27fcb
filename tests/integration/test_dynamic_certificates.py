"""--tls-sni-cert-key picks the serving certificate by the requested name, and the serving pair, the SNI pairs
and the client CA are read again when their files change (a rotation without restart)."""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import time

import pytest
from cryptography import x509

from conftest import Server, wait_for
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.server import dynamiccerts
from kube_apiserver.testing.certs import CertificateAuthority, write_pair


def _served_certificate(server: Server, server_name: str | None) -> x509.Certificate:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=server_name) as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))


def _common_name(cert: x509.Certificate) -> str:
    return cert.subject.rfc4514_string()


def _whoami(server: Server, cert: tuple[str, str]) -> int:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(*cert)
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=10)
    try:
        conn.request("GET", "/api", headers={})
        return conn.getresponse().status
    except (ssl.SSLError, ConnectionError):
        return 0
    finally:
        conn.close()


def _serving_pair(ca: CertificateAuthority, directory: str, name: str) -> tuple[str, str]:
    """The serving pair, its CA after the certificate (what clients of the test server trust)."""
    cert, key = ca.issue(name, sans=("127.0.0.1",))
    return write_pair(directory, "serving", cert + ca.cert_pem, key)


@pytest.fixture
def pki(tmp_path):
    serving_ca = CertificateAuthority.generate("serving-ca")
    d = str(tmp_path / "pki")
    files = {
        "serving": _serving_pair(serving_ca, d, "default-serving"),
        "foo": write_pair(d, "foo", *serving_ca.issue("foo-serving", sans=("foo.example.com",))),
        "wild": write_pair(d, "wild", *serving_ca.issue("wild-serving", sans=("unused.example.org",))),
    }
    return serving_ca, d, files


def test_sni_and_reloads(tmp_path, pki, monkeypatch):
    serving_ca, d, files = pki
    client_ca = CertificateAuthority.generate("client-ca-1")
    client_ca_file = os.path.join(d, "client-ca.crt")
    with open(client_ca_file, "wb") as f:
        f.write(client_ca.cert_pem)
    monkeypatch.setattr(dynamiccerts, "POLL_SECONDS", 0.1)
    server = Server(str(tmp_path / "data"), [
        "--tls-cert-file", files["serving"][0], "--tls-private-key-file", files["serving"][1],
        "--tls-sni-cert-key", ",".join(files["foo"]),  # names from the certificate
        "--tls-sni-cert-key", ",".join(files["wild"]) + ":*.wild.example.com",
        "--client-ca-file", client_ca_file, "--authorization-mode", "AlwaysAllow"]).start()
    try:
        assert _common_name(_served_certificate(server, None)) == "CN=default-serving"
        assert _common_name(_served_certificate(server, "foo.example.com")) == "CN=foo-serving"
        assert _common_name(_served_certificate(server, "a.wild.example.com")) == "CN=wild-serving"
        assert _common_name(_served_certificate(server, "b.a.wild.example.com")) == "CN=default-serving"
        assert _common_name(_served_certificate(server, "unused.example.org")) == "CN=default-serving"

        # the serving pair is rotated on disk
        time.sleep(0.02)  # a new mtime
        _serving_pair(serving_ca, d, "rotated-serving")
        wait_for(lambda: _common_name(_served_certificate(server, None)) == "CN=rotated-serving", timeout=10)

        # the client CA is replaced: the old CA's users are refused at the handshake, the new one's are in
        old_user = write_pair(d, "old-user", *client_ca.issue("old-user", client=True))
        assert _whoami(server, old_user) == 200
        new_ca = CertificateAuthority.generate("client-ca-2")
        new_user = write_pair(d, "new-user", *new_ca.issue("new-user", client=True))
        assert _whoami(server, new_user) == 0
        with open(client_ca_file, "wb") as f:
            f.write(new_ca.cert_pem)
        wait_for(lambda: _whoami(server, new_user) == 200, timeout=10)
        assert _whoami(server, old_user) == 0
    finally:
        server.stop()


def test_a_bad_pair_is_a_flag_error(tmp_path, pki, capsys):
    _, d, files = pki
    errors = ServerRunOptions.parse(["--data-dir", str(tmp_path), "--tls-sni-cert-key",
                                     f"{files['foo'][0]},{os.path.join(d, 'missing.key')}"]).complete().validate()
    assert any("missing.key" in error for error in errors)
    for value, message in (("only-one-file", "expected comma separated certificate and key file paths"),
                           ("a.crt,a.key:", "empty names list is not allowed")):
        with pytest.raises(SystemExit):
            ServerRunOptions.parse(["--data-dir", str(tmp_path), "--tls-sni-cert-key", value])
        assert f'Error: invalid argument "{value}" for "--tls-sni-cert-key" flag: {message}' in capsys.readouterr().err
