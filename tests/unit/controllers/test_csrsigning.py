"""The csrsigning controller against a real server (in-process, its loopback client): an approved CSR of
each built-in signer gets a certificate the CA verifies, with the usages asked for and the duration the
signer gives; a request the signer's rules refuse gets the Failed condition; pending, denied and
other signers' CSRs are left alone."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ipaddress
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.certificates.config import (
    KUBE_APISERVER_CLIENT,
    KUBELET_CLIENT,
    KUBELET_SERVING,
    LEGACY_UNKNOWN,
    CSRSigningConfiguration,
)
from kube_apiserver.controllers.certificates.signer import (
    CertificateAuthority,
    CSRSigningController,
    boundaries,
    certificate_duration,
    load_authorities,
)

DAY = 24 * 3600


def make_ca(directory: Path, name: str = "ca") -> tuple[str, str]:
    """A self-signed ECDSA CA written as PEM files; their paths."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"test-{name}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return str(cert_file), str(key_file)


def make_request(
    cn: str, orgs: tuple[str, ...] = (), dns: tuple[str, ...] = (), ips: tuple[str, ...] = ()
) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs))
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def csr_object(
    name: str, signer: str, request: bytes, usages: list[str], expiration: int | None = None
) -> dict:
    spec = {"request": base64.b64encode(request).decode(), "signerName": signer, "usages": usages}
    if expiration is not None:
        spec["expirationSeconds"] = expiration
    return {"metadata": {"name": name}, "spec": spec}


def _csrs(client):  # noqa: ANN001, ANN202
    return client.resource("certificates.k8s.io", "v1", "certificatesigningrequests")


async def decide(client, name: str, condition: str = "Approved") -> None:  # noqa: ANN001
    csr = await _csrs(client).get(name)
    csr["status"] = {
        "conditions": [{"type": condition, "status": "True", "reason": "Test", "message": "by the test"}]
    }
    await _csrs(client).update(csr, "approval")


async def certificate_of(client, name: str) -> x509.Certificate:  # noqa: ANN001
    async def issued() -> str:
        return ((await _csrs(client).get(name)).get("status") or {}).get("certificate", "")

    pem = await eventually(issued)
    return x509.load_pem_x509_certificate(base64.b64decode(pem))


@contextlib.asynccontextmanager
async def signing(tmp_path: Path, duration: float = 365 * DAY) -> AsyncIterator:
    cert_file, key_file = make_ca(tmp_path)
    config = CSRSigningConfiguration(cluster_signing_cert_file=cert_file, cluster_signing_key_file=key_file)

    def controllers(c: ControllerCluster) -> list:
        return [CSRSigningController(c.client, c.informers, load_authorities(config), duration)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client, CertificateAuthority.load(cert_file, key_file)


def _usages(cert: x509.Certificate) -> tuple[x509.KeyUsage, list]:
    key_usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    extended = list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
    return key_usage, extended


def test_each_built_in_signer_signs_an_approved_csr(tmp_path: Path) -> None:
    cases = [
        (
            "client",
            KUBE_APISERVER_CLIENT,
            make_request("alice", ("devs",)),
            ["client auth", "digital signature"],
        ),
        (
            "kubelet-client",
            KUBELET_CLIENT,
            make_request("system:node:n1", ("system:nodes",)),
            ["digital signature", "client auth"],
        ),
        (
            "kubelet-serving",
            KUBELET_SERVING,
            make_request("system:node:n1", ("system:nodes",), dns=("n1",), ips=("10.0.0.5",)),
            ["digital signature", "key encipherment", "server auth"],
        ),
    ]

    async def main() -> None:
        async with signing(tmp_path) as (client, ca):
            for name, signer, request, usages in cases:
                await _csrs(client).create(csr_object(name, signer, request, usages))
                await decide(client, name)
            for name, _signer, request, usages in cases:
                cert = await certificate_of(client, name)
                cert.verify_directly_issued_by(ca.certificate)
                asked = x509.load_pem_x509_csr(request)
                assert cert.subject == asked.subject
                assert cert.public_key() == asked.public_key()
                key_usage, extended = _usages(cert)
                assert key_usage.digital_signature
                assert key_usage.key_encipherment == ("key encipherment" in usages)
                wanted = {
                    "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
                    "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
                }
                assert extended == [wanted[u] for u in ("server auth", "client auth") if u in usages]
                basic = cert.extensions.get_extension_for_class(x509.BasicConstraints)
                assert basic.critical and not basic.value.ca
                lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
                assert lifetime == datetime.timedelta(days=365)
                assert 0 < cert.serial_number < 2**128
            serving = await certificate_of(client, "kubelet-serving")
            sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            assert sans.get_values_for_type(x509.DNSName) == ["n1"]
            assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["10.0.0.5"]

    asyncio.run(main())


def test_expiration_seconds_shortens_the_certificate_and_it_is_not_backdated_when_short(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        async with signing(tmp_path, duration=30 * DAY) as (client, _ca):
            request = make_request("bob")
            await _csrs(client).create(
                csr_object("short", KUBE_APISERVER_CLIENT, request, ["client auth"], 3600)
            )
            await _csrs(client).create(
                csr_object("long", KUBE_APISERVER_CLIENT, request, ["client auth"], 90 * DAY)
            )
            for name in ("short", "long"):
                await decide(client, name)
            short, long = await certificate_of(client, "short"), await certificate_of(client, "long")
            # 1 hour from now, NotBefore 5 minutes back (for skew): 65 minutes in all
            assert short.not_valid_after_utc - short.not_valid_before_utc == datetime.timedelta(minutes=65)
            # longer than --cluster-signing-duration asked: the duration, from the backdated NotBefore
            assert long.not_valid_after_utc - long.not_valid_before_utc == datetime.timedelta(days=30)

    asyncio.run(main())


def test_a_request_the_signer_refuses_fails_and_others_are_left_alone(tmp_path: Path) -> None:
    async def main() -> None:
        async with signing(tmp_path) as (client, _ca):
            wrong_org = make_request("system:node:n1", ("devs",), dns=("n1",))
            await _csrs(client).create(
                csr_object("bad-serving", KUBELET_SERVING, wrong_org, ["digital signature", "server auth"])
            )
            await _csrs(client).create(
                csr_object(
                    "bad-client", KUBE_APISERVER_CLIENT, make_request("x"), ["server auth", "client auth"]
                )
            )
            await _csrs(client).create(
                csr_object("pending", KUBE_APISERVER_CLIENT, make_request("y"), ["client auth"])
            )
            await _csrs(client).create(
                csr_object("denied", KUBE_APISERVER_CLIENT, make_request("z"), ["client auth"])
            )
            await _csrs(client).create(
                csr_object("other", "example.com/mine", make_request("w"), ["client auth"])
            )
            for name in ("bad-serving", "bad-client", "other"):
                await decide(client, name)
            await decide(client, "denied", "Denied")

            async def failed(name: str) -> dict | None:
                conditions = ((await _csrs(client).get(name)).get("status") or {}).get("conditions") or []
                return next((c for c in conditions if c["type"] == "Failed"), None)

            serving = await eventually(lambda: failed("bad-serving"))
            assert serving["status"] == "True" and serving["reason"] == "SignerValidationFailure"
            assert serving["message"] == "subject organization is not system:nodes"
            client_failure = await eventually(lambda: failed("bad-client"))
            assert client_failure["message"] == "invalid usage for client certificate: server auth"
            # a CSR signed after these would show the controller went past them: sign one more, then check
            await _csrs(client).create(
                csr_object("last", KUBE_APISERVER_CLIENT, make_request("v"), ["client auth"])
            )
            await decide(client, "last")
            await certificate_of(client, "last")
            for name in ("pending", "denied", "other", "bad-serving"):
                assert not ((await _csrs(client).get(name)).get("status") or {}).get("certificate")

    asyncio.run(main())


@pytest.mark.parametrize(
    ("signer", "cn", "orgs", "dns", "ips", "usages", "message"),
    [
        (
            KUBELET_SERVING,
            "system:node:a",
            ("system:nodes",),
            (),
            (),
            ["digital signature", "server auth"],
            "DNS or IP subjectAltName is required",
        ),
        (
            KUBELET_SERVING,
            "system:node:a",
            ("system:nodes",),
            ("a",),
            (),
            ["server auth"],
            "usages did not match [digital signature key encipherment server auth]",
        ),
        (
            KUBELET_SERVING,
            "a",
            ("system:nodes",),
            ("a",),
            (),
            ["digital signature", "server auth"],
            "subject common name does not begin with system:node:",
        ),
        (
            KUBELET_CLIENT,
            "system:node:a",
            ("system:nodes",),
            ("a",),
            (),
            ["digital signature", "client auth"],
            "DNS subjectAltNames are not allowed",
        ),
        (
            KUBELET_CLIENT,
            "system:node:a",
            ("system:nodes",),
            (),
            ("10.0.0.1",),
            ["digital signature", "client auth"],
            "IP subjectAltNames are not allowed",
        ),
        (
            KUBELET_CLIENT,
            "system:node:a",
            ("system:nodes", "x"),
            (),
            (),
            ["digital signature", "client auth"],
            "subject organization is not system:nodes",
        ),
        (
            KUBELET_CLIENT,
            "system:node:a",
            ("system:nodes",),
            (),
            (),
            ["client auth"],
            "usages did not match [client auth digital signature key encipherment]",
        ),
        (
            KUBE_APISERVER_CLIENT,
            "a",
            (),
            (),
            (),
            ["digital signature"],
            "missing required usage for client certificate: client auth",
        ),
        (KUBE_APISERVER_CLIENT, "a", (), (), (), ["key encipherment", "client auth"], None),
        (LEGACY_UNKNOWN, "a", (), (), (), ["server auth"], None),
    ],
)
def test_signer_rules(signer, cn, orgs, dns, ips, usages, message) -> None:  # noqa: ANN001
    from kube_apiserver.controllers.certificates.signer import signer_validation_error

    request = x509.load_pem_x509_csr(make_request(cn, orgs, dns, ips))
    assert signer_validation_error(signer, request, usages) == message


def test_durations_and_boundaries() -> None:
    year = 365 * DAY
    assert certificate_duration(year, None) == datetime.timedelta(days=365)
    assert certificate_duration(year, 60) == datetime.timedelta(minutes=10)  # never under 10 minutes
    assert certificate_duration(year, 2 * year) == datetime.timedelta(days=365)
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    ca_end = now + datetime.timedelta(days=30)
    before, after = boundaries(now, datetime.timedelta(days=365), ca_end)
    assert before == now - datetime.timedelta(minutes=5) and after == ca_end  # not past the CA


def test_signing_files_per_signer_or_generic() -> None:
    generic = CSRSigningConfiguration(cluster_signing_cert_file="c", cluster_signing_key_file="k")
    assert set(generic.signer_files()) == {
        KUBE_APISERVER_CLIENT,
        KUBELET_CLIENT,
        KUBELET_SERVING,
        LEGACY_UNKNOWN,
    }
    specific = CSRSigningConfiguration(kubelet_serving_cert_file="c", kubelet_serving_key_file="k")
    assert specific.signer_files() == {KUBELET_SERVING: ("c", "k")}
    both = CSRSigningConfiguration(cluster_signing_cert_file="c", legacy_unknown_key_file="k")
    assert both.validate() == [
        "cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time"
    ]
    defaulted = CSRSigningConfiguration()
    defaulted.default_to("ca.crt", "ca.key")
    assert defaulted.signer_files()[KUBELET_CLIENT] == ("ca.crt", "ca.key")


def test_a_rotated_ca_signs_from_then_on(tmp_path: Path) -> None:
    async def main() -> None:
        async with signing(tmp_path) as (client, old_ca):
            await _csrs(client).create(
                csr_object("before", KUBE_APISERVER_CLIENT, make_request("a"), ["client auth"])
            )
            await decide(client, "before")
            (await certificate_of(client, "before")).verify_directly_issued_by(old_ca.certificate)
            new_ca = CertificateAuthority.load(*make_ca(tmp_path))  # the same files, a new CA
            await _csrs(client).create(
                csr_object("after", KUBE_APISERVER_CLIENT, make_request("b"), ["client auth"])
            )
            await decide(client, "after")
            (await certificate_of(client, "after")).verify_directly_issued_by(new_ca.certificate)

    asyncio.run(main())
