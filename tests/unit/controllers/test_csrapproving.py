"""The csrapproving controller against a real server (in-process): a kubelet client CSR whose requester
may create certificatesigningrequests/nodeclient (the loopback user, a system:masters member) is
approved with AutoApproved; CSRs of other signers or not shaped like a kubelet's are left pending."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cryptography import x509
from test_csrsigning import csr_object, make_request

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.certificates.approver import RECOGNIZERS, CSRApprovingController, recognizes
from kube_apiserver.controllers.certificates.config import KUBE_APISERVER_CLIENT, KUBELET_CLIENT

KUBELET_USAGES = ["digital signature", "client auth"]


def _csrs(client):  # noqa: ANN001, ANN202
    return client.resource("certificates.k8s.io", "v1", "certificatesigningrequests")


def test_a_kubelet_client_csr_is_auto_approved_after_the_review(tmp_path: Path) -> None:
    def controllers(c: ControllerCluster) -> list:
        return [CSRApprovingController(c.client, c.informers)]

    async def main() -> None:
        async with controller_cluster(str(tmp_path), controllers) as c:
            node = make_request("system:node:n1", ("system:nodes",))
            await _csrs(c.client).create(csr_object("node", KUBELET_CLIENT, node, KUBELET_USAGES))
            await _csrs(c.client).create(
                csr_object("user", KUBE_APISERVER_CLIENT, make_request("u"), ["client auth"])
            )
            odd = make_request("system:node:n1", ("devs",))
            await _csrs(c.client).create(csr_object("odd", KUBELET_CLIENT, odd, KUBELET_USAGES))

            async def approved(name: str) -> dict | None:
                conditions = ((await _csrs(c.client).get(name)).get("status") or {}).get("conditions") or []
                return next((x for x in conditions if x["type"] == "Approved"), None)

            condition = await eventually(lambda: approved("node"))
            assert condition["status"] == "True" and condition["reason"] == "AutoApproved"
            assert (
                condition["message"] == "Auto approving kubelet client certificate after SubjectAccessReview."
            )
            # created before "node" and seen by the same informer: had they been approved, they would be by now
            assert await approved("user") is None and await approved("odd") is None

    asyncio.run(main())


def test_self_node_client_needs_the_requester_to_be_the_node() -> None:
    request = x509.load_pem_x509_csr(make_request("system:node:n1", ("system:nodes",)))
    self_node, node = RECOGNIZERS
    csr = {"spec": {"signerName": KUBELET_CLIENT, "usages": KUBELET_USAGES, "username": "system:node:n1"}}
    assert recognizes(self_node, csr, request) and recognizes(node, csr, request)
    csr["spec"]["username"] = "bootstrap"
    assert not recognizes(self_node, csr, request) and recognizes(node, csr, request)
    csr["spec"]["usages"] = ["client auth"]
    assert not recognizes(node, csr, request)
