"""Self-signed serving certificates: SANs, chain of trust, permissions, reuse and regeneration."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import stat

import pytest
from cryptography import x509

from kube_apiserver.server import certs


def generate(tmp_path, dns=(), ips=("10.0.0.1", "192.0.2.7")) -> certs.ServingCerts:
    return certs.ensure_self_signed_serving_certs(str(tmp_path / "pki"), list(dns), list(ips))


def load_chain(path: str) -> list[x509.Certificate]:
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificates(f.read())


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def sans(cert: x509.Certificate) -> tuple[set[str], set[str]]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(san.get_values_for_type(x509.DNSName)), {
        str(ip) for ip in san.get_values_for_type(x509.IPAddress)
    }


def test_files_and_permissions(tmp_path):
    generated = generate(tmp_path)
    pki = tmp_path / "pki"
    assert generated == certs.ServingCerts(
        str(pki / "apiserver.crt"), str(pki / "apiserver.key"), str(pki / "ca.crt")
    )
    for key in (generated.key_file, str(pki / "ca.key")):
        assert stat.S_IMODE(os.stat(key).st_mode) == 0o600


def test_subject_alternative_names(tmp_path):
    leaf = load_chain(generate(tmp_path, dns=["api.example.test"]).cert_file)[0]
    dns, ips = sans(leaf)
    assert dns >= {
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
        "localhost",
        "api.example.test",
    }
    assert ips >= {"127.0.0.1", "10.0.0.1", "192.0.2.7"}


def test_ca_and_leaf_properties(tmp_path):
    generated = generate(tmp_path)
    leaf, chained_ca = load_chain(generated.cert_file)
    (ca,) = load_chain(generated.ca_file)
    assert chained_ca == ca
    assert ca.subject.rfc4514_string().startswith("CN=kube-apiserver-ca@")
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    leaf.verify_directly_issued_by(ca)
    lifetime = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    assert datetime.timedelta(days=364) < lifetime <= datetime.timedelta(days=366)
    assert ca.not_valid_after_utc - ca.not_valid_before_utc > datetime.timedelta(days=3600)


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, hostname: str) -> None:
    """A TLS handshake over in-memory BIOs; raises ssl.SSLError if the client rejects the server."""
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    client_obj = client.wrap_bio(c_in, c_out, server_hostname=hostname)
    server_obj = server.wrap_bio(s_in, s_out, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for name, obj, out, peer_in in (
            ("client", client_obj, c_out, s_in),
            ("server", server_obj, s_out, c_in),
        ):
            if not done[name]:
                try:
                    obj.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
            peer_in.write(out.read())
        if all(done.values()):
            return
    raise AssertionError("handshake did not complete")


@pytest.mark.parametrize("hostname", ["localhost", "kubernetes.default.svc", "127.0.0.1", "10.0.0.1"])
def test_tls_clients_trusting_the_ca_accept_the_server(tmp_path, hostname):
    generated = generate(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(generated.cert_file, generated.key_file)
    client = ssl.create_default_context(cafile=generated.ca_file)
    _handshake(server, client, hostname)


def test_tls_client_rejects_unknown_name(tmp_path):
    generated = generate(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(generated.cert_file, generated.key_file)
    client = ssl.create_default_context(cafile=generated.ca_file)
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(server, client, "evil.example.com")


def test_reused_on_second_call(tmp_path):
    first = generate(tmp_path)
    before = {path: read(path) for path in (first.cert_file, first.key_file, first.ca_file)}
    second = generate(tmp_path)
    assert second == first
    assert {path: read(path) for path in before} == before


def test_new_san_reissues_serving_cert_but_keeps_ca(tmp_path):
    first = generate(tmp_path)
    ca_before, leaf_before = read(first.ca_file), read(first.cert_file)
    second = generate(tmp_path, ips=("10.0.0.1", "192.0.2.7", "198.51.100.1"))
    assert read(second.ca_file) == ca_before
    assert read(second.cert_file) != leaf_before
    assert "198.51.100.1" in sans(load_chain(second.cert_file)[0])[1]


def test_a_reissued_serving_cert_keeps_the_names_of_the_one_it_replaces(tmp_path):
    """Replicas sharing a data directory, each with its own advertise address, converge on one
    certificate that covers all of them instead of each re-issuing it without the others' address."""
    generate(tmp_path, ips=("192.0.2.1",))
    generate(tmp_path, dns=("replica-2.example",), ips=("192.0.2.2",))
    third = generate(tmp_path, ips=("192.0.2.3",))
    dns, ips = sans(load_chain(third.cert_file)[0])
    assert {"192.0.2.1", "192.0.2.2", "192.0.2.3", "127.0.0.1"} <= ips
    assert "replica-2.example" in dns
    assert generate(tmp_path, ips=("192.0.2.1",)) == third  # covered now: reused, not re-issued


def test_expiring_serving_cert_is_reissued(tmp_path, monkeypatch):
    first = generate(tmp_path)
    leaf_before = read(first.cert_file)
    monkeypatch.setattr(certs, "RENEW_BEFORE", datetime.timedelta(days=400))
    assert read(generate(tmp_path).cert_file) != leaf_before


def test_broken_ca_regenerates_everything(tmp_path):
    first = generate(tmp_path)
    leaf_before, ca_before = read(first.cert_file), read(first.ca_file)
    with open(tmp_path / "pki" / "ca.key", "w") as f:
        f.write("garbage")
    second = generate(tmp_path)
    assert read(second.ca_file) != ca_before and read(second.cert_file) != leaf_before
    load_chain(second.cert_file)[0].verify_directly_issued_by(load_chain(second.ca_file)[0])


def test_ipv6_alternate(tmp_path):
    leaf = load_chain(generate(tmp_path, ips=("fd00::1",)).cert_file)[0]
    assert str(ipaddress.ip_address("fd00::1")) in sans(leaf)[1]


def test_key_pair_error(tmp_path):
    generated = generate(tmp_path)
    assert certs.key_pair_error(generated.cert_file, generated.key_file) is None
    assert (
        certs.key_pair_error(generated.ca_file, generated.key_file)
        == "tls: private key does not match public key"
    )
    assert certs.key_pair_error(generated.cert_file, generated.cert_file) == (
        "tls: failed to find any PEM data in key input"
    )
