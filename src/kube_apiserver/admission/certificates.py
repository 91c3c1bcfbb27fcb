"""The CertificateSigningRequest admission plugins (plugin/pkg/admission/certificates): approving needs
`approve` and signing needs `sign` on the signer (certificates.k8s.io signers, by signerName or its
`<domain>/*`), and no CSR for the kube-apiserver-client signer may ask for system:masters."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from ..apimachinery import pem
from ..authorization.authorizer import ALLOW, Authorizer
from ..authorization.authorizer import Attributes as AuthzAttributes
from .interfaces import CREATE, UPDATE, Attributes, forbidden

Object = dict[str, Any]
GROUP = "certificates.k8s.io"
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"


def _is_csr(attrs: Attributes, subresource: str) -> bool:
    return attrs.group == GROUP and attrs.resource == "certificatesigningrequests" and \
        attrs.subresource == subresource


def _signer(obj: Object | None) -> str:
    return ((obj or {}).get("spec") or {}).get("signerName", "")


async def authorized_for_signer(authorizer: Authorizer, attrs: Attributes, verb: str, signer: str) -> bool:
    """IsAuthorizedForSignerName: the exact signer name, else every signer of its domain."""
    names = [signer]
    if "/" in signer:
        names.append(signer.split("/", 1)[0] + "/*")
    for name in names:
        decision, _ = await authorizer.authorize(AuthzAttributes(
            attrs.user, verb, True, api_group=GROUP, api_version="*", resource="signers", name=name))
        if decision == ALLOW:
            return True
    return False


class CertificateApproval:
    name = "CertificateApproval"

    def __init__(self, authorizer: Authorizer):
        self.authorizer = authorizer

    def handles(self, operation: str) -> bool:
        return operation == UPDATE

    async def validate(self, attrs: Attributes) -> None:
        if not _is_csr(attrs, "approval"):
            return
        signer = _signer(attrs.old_object)
        if not await authorized_for_signer(self.authorizer, attrs, "approve", signer):
            raise forbidden(attrs, f'user not permitted to approve requests with signerName "{signer}"')


class CertificateSigning:
    name = "CertificateSigning"

    def __init__(self, authorizer: Authorizer):
        self.authorizer = authorizer

    def handles(self, operation: str) -> bool:
        return operation == UPDATE

    async def validate(self, attrs: Attributes) -> None:
        if not _is_csr(attrs, "status"):
            return
        new = ((attrs.object or {}).get("status") or {}).get("certificate")
        old = ((attrs.old_object or {}).get("status") or {}).get("certificate")
        if new == old:  # only issuing or changing the certificate is signing
            return
        signer = _signer(attrs.old_object)
        if not await authorized_for_signer(self.authorizer, attrs, "sign", signer):
            raise forbidden(attrs, f'user not permitted to sign requests with signerName "{signer}"')


def _organizations(request: Any) -> list[str]:
    try:
        data = base64.b64decode(request) if isinstance(request, str) else b""
    except (binascii.Error, ValueError):
        return []
    block, _ = pem.decode(data)
    if block is None:
        return []
    try:
        csr = x509.load_der_x509_csr(block.data)
    except ValueError:
        return []
    return [str(a.value) for a in csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


class CertificateSubjectRestriction:
    name = "CertificateSubjectRestriction"

    def handles(self, operation: str) -> bool:
        return operation == CREATE

    async def validate(self, attrs: Attributes) -> None:
        if not _is_csr(attrs, "") or _signer(attrs.object) != KUBE_APISERVER_CLIENT:
            return
        if "system:masters" in _organizations(((attrs.object or {}).get("spec") or {}).get("request")):
            raise forbidden(attrs, f"use of {KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed")
