"""The csrcleaner controller against a real server (in-process): with its clock moved on, the CSRs past
their deadline go (approved and issued, denied, failed after an hour, pending after a day, an expired
certificate at once) and the others stay."""

from __future__ import annotations

import asyncio
import base64
import datetime
from pathlib import Path

from cryptography import x509
from test_csrsigning import csr_object, decide, make_ca, make_request

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.certificates.cleaner import CSRCleanerController, why_delete
from kube_apiserver.controllers.certificates.config import KUBE_APISERVER_CLIENT
from kube_apiserver.controllers.certificates.signer import CertificateAuthority

NOW = datetime.datetime.now(datetime.UTC)


def _csrs(client):  # noqa: ANN001, ANN202
    return client.resource("certificates.k8s.io", "v1", "certificatesigningrequests")


async def _names(client) -> set[str]:  # noqa: ANN001
    return {c["metadata"]["name"] for c in (await _csrs(client).list())["items"]}


def _issued_certificate(tmp_path: Path, hours: float) -> str:
    """A certificate of `hours` lifetime from now (negative: already expired), base64 as status carries it."""
    ca = CertificateAuthority.load(*make_ca(tmp_path, "issuer"))
    request = x509.load_pem_x509_csr(make_request("u"))
    start = NOW - datetime.timedelta(hours=2) if hours < 0 else NOW
    pem = ca.sign(request, ["client auth"], datetime.timedelta(hours=abs(hours)), start)
    if hours < 0:  # issued two hours ago, expired since
        assert x509_not_after(pem) < NOW
    return base64.b64encode(pem).decode()


def x509_not_after(pem: bytes) -> datetime.datetime:
    return x509.load_pem_x509_certificate(pem).not_valid_after_utc


def test_the_cleaner_deletes_what_is_past_its_deadline(tmp_path: Path) -> None:
    offset = {"by": datetime.timedelta(0)}
    cleaners: list[CSRCleanerController] = []

    def controllers(c: ControllerCluster) -> list:
        csrs = c.informers.for_resource("certificates.k8s.io", "v1", "certificatesigningrequests")
        cleaner = CSRCleanerController(
            c.client, csrs, interval=3600, clock=lambda: datetime.datetime.now(datetime.UTC) + offset["by"]
        )
        cleaners.append(cleaner)
        return [cleaner]

    async def main() -> None:
        async with controller_cluster(str(tmp_path), controllers) as c:
            client = c.client
            for name in ("pending", "approved-issued", "approved-unissued", "denied", "expired"):
                await _csrs(client).create(
                    csr_object(name, KUBE_APISERVER_CLIENT, make_request(name), ["client auth"])
                )
            for name in ("approved-issued", "approved-unissued", "expired"):
                await decide(client, name)
            await decide(client, "denied", "Denied")
            for name, hours in (("approved-issued", 24 * 365), ("expired", -1)):
                csr = await _csrs(client).get(name)
                csr["status"]["certificate"] = _issued_certificate(tmp_path, hours)
                await _csrs(client).update(csr, "status")
            [cleaner] = cleaners
            informer = cleaner.csrs

            async def seen_all() -> bool:
                csrs = informer.indexer.list()
                return len(csrs) == 5 and all(
                    (x.get("status") or {}).get("certificate")
                    for x in csrs
                    if x["metadata"]["name"] == "expired"
                )

            await eventually(seen_all)
            await cleaner.clean()  # now: only the expired certificate's CSR goes
            assert await _names(client) == {"pending", "approved-issued", "approved-unissued", "denied"}
            offset["by"] = datetime.timedelta(hours=1, minutes=1)
            await eventually(lambda: _count(informer, 4))
            await cleaner.clean()  # an hour on: approved and issued, and denied, go
            assert await _names(client) == {"pending", "approved-unissued"}
            offset["by"] = datetime.timedelta(hours=24, minutes=1)
            await eventually(lambda: _count(informer, 2))
            await cleaner.clean()  # a day on: pending goes; approved but never issued stays
            assert await _names(client) == {"approved-unissued"}

    asyncio.run(main())


async def _count(informer, n: int) -> bool:  # noqa: ANN001
    return len(informer.indexer.list()) == n


def test_failed_csrs_go_after_an_hour() -> None:
    stamp = (NOW - datetime.timedelta(minutes=61)).strftime("%Y-%m-%dT%H:%M:%SZ")
    csr = {
        "metadata": {"name": "f", "creationTimestamp": stamp},
        "status": {
            "conditions": [
                {"type": "Approved", "lastUpdateTime": stamp},
                {"type": "Failed", "lastUpdateTime": stamp},
            ]
        },
    }
    assert why_delete(csr, NOW) == "Cleaning CSR 'f' as it is more than 1h0m0s old and failed."
    csr["status"]["conditions"][1]["lastUpdateTime"] = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert why_delete(csr, NOW) is None
