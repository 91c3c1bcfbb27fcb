"""The csrapproving controller (pkg/controller/certificates/approver): a pending CSR that a kubelet's
client certificate request would be (signer kube-apiserver-client-kubelet, subject and usages as
ValidateKubeletClientCSR wants) is approved when a SubjectAccessReview allows its requester to create
certificatesigningrequests/selfnodeclient (a node renewing its own certificate) or .../nodeclient."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from cryptography import x509

from ...apimachinery import errors
from ...client.informers import SharedInformerFactory
from ...client.rest import Client
from .config import KUBELET_CLIENT
from .csr import APPROVED, DENIED, GROUP, RESOURCE, VERSION, CertificateController, conditions, parse_csr
from .signer import common_name, validate_kubelet_client

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]


class NotApprovedError(Exception):
    """IgnorableError: recognized but the review did not allow it; retried later (the RBAC may change)."""


@dataclass(frozen=True)
class Recognizer:
    subresource: str
    self_only: bool  # the requester must be the node the certificate names
    success_message: str


RECOGNIZERS = (
    Recognizer(
        "selfnodeclient", True, "Auto approving self kubelet client certificate after SubjectAccessReview."
    ),
    Recognizer("nodeclient", False, "Auto approving kubelet client certificate after SubjectAccessReview."),
)


def _is_node_client(csr: Object, request: x509.CertificateSigningRequest) -> bool:
    spec = csr.get("spec") or {}
    if spec.get("signerName") != KUBELET_CLIENT:
        return False
    usages = {u for u in spec.get("usages") or () if isinstance(u, str)}
    return validate_kubelet_client(request, usages) is None


def recognizes(recognizer: Recognizer, csr: Object, request: x509.CertificateSigningRequest) -> bool:
    if recognizer.self_only and (csr.get("spec") or {}).get("username") != common_name(request):
        return False
    return _is_node_client(csr, request)


class CSRApprovingController(CertificateController):
    def __init__(self, client: Client, informers: SharedInformerFactory):
        super().__init__("csrapproving", informers.for_resource(GROUP, VERSION, RESOURCE), self._handle)
        self.client = client

    async def _handle(self, csr: Object) -> None:
        if any(c.get("type") in (APPROVED, DENIED) for c in conditions(csr)):
            return
        try:
            request = parse_csr(csr)
        except ValueError as err:
            log.warning("csrapproving: unable to parse csr %r: %s", csr["metadata"]["name"], err)
            return
        tried = []
        for recognizer in RECOGNIZERS:
            if not recognizes(recognizer, csr, request):
                continue
            tried.append(recognizer.subresource)
            if await self._authorized(csr, recognizer.subresource):
                await self._approve(csr, recognizer.success_message)
                return
        if tried:
            raise NotApprovedError(
                f"recognized csr {csr['metadata']['name']!r} as [{' '.join(tried)}] but subject "
                "access review was not approved"
            )

    async def _authorized(self, csr: Object, subresource: str) -> bool:
        spec = csr.get("spec") or {}
        review_spec: Object = {
            "user": spec.get("username", ""),
            "uid": spec.get("uid", ""),
            "groups": list(spec.get("groups") or ()),
            "resourceAttributes": {
                "group": GROUP,
                "resource": RESOURCE,
                "verb": "create",
                "subresource": subresource,
            },
        }
        if spec.get("extra"):
            review_spec["extra"] = spec["extra"]
        review = await self.client.resource("authorization.k8s.io", "v1", "subjectaccessreviews").create(
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": review_spec}
        )
        return bool((review.get("status") or {}).get("allowed"))

    async def _approve(self, csr: Object, message: str) -> None:
        approved = {"type": APPROVED, "status": "True", "reason": "AutoApproved", "message": message}
        status = dict(csr.get("status") or {})
        status["conditions"] = [*(status.get("conditions") or ()), approved]
        try:
            await self.client.resource(GROUP, VERSION, RESOURCE).update({**csr, "status": status}, "approval")
        except errors.StatusError as err:
            if err.code != 404:
                raise
