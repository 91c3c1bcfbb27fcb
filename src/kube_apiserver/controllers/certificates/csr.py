"""What the certificate controllers share (pkg/controller/certificates: certificate_controller.go and
its utils): a CertificateSigningRequest's conditions, its request parsed, and the queue-driven
controller that hands each CSR without a certificate to a handler."""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography import x509

from ...client.informers import EventHandler, SharedIndexInformer, object_key
from ...client.workqueue import WorkQueue
from ..queue_controller import QueueController

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
GROUP, VERSION, RESOURCE = "certificates.k8s.io", "v1", "certificatesigningrequests"
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"


def conditions(csr: Object) -> list[Object]:
    return list((csr.get("status") or {}).get("conditions") or ())


def has_true_condition(csr: Object, condition_type: str) -> bool:
    """HasTrueCondition: a condition of that type whose status is True (or empty, as v1beta1 wrote it)."""
    return any(
        c.get("type") == condition_type and c.get("status", "True") in ("True", "") for c in conditions(csr)
    )


def is_approved(csr: Object) -> bool:
    """IsCertificateRequestApproved: approved and not denied."""
    return has_true_condition(csr, APPROVED) and not has_true_condition(csr, DENIED)


def decode_bytes(value: Any) -> bytes:
    """A []byte field as JSON carries it (base64); b"" when absent or not base64."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def parse_csr(csr: Object) -> x509.CertificateSigningRequest:
    """ParseCSR of spec.request; raises ValueError with upstream's message."""
    request = decode_bytes((csr.get("spec") or {}).get("request"))
    marker = b"-----BEGIN CERTIFICATE REQUEST-----"
    if marker not in request:
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    return x509.load_pem_x509_csr(request[request.index(marker) :])


Handler = Callable[[Object], Awaitable[None]]


class CertificateController(QueueController):
    """certificate_controller.go: every CSR added or updated is queued; a queued CSR still in the
    informer and without a certificate goes to `handle`, retried rate limited when it raises."""

    def __init__(self, name: str, csrs: SharedIndexInformer, handle: Handler, workers: int = 5):
        self.name = name
        self.csrs = csrs
        self.handle = handle
        self.workers = workers
        self.queue: WorkQueue[str] = WorkQueue(name)
        self.informers = (csrs,)

    def register_handlers(self) -> None:
        self.csrs.add_event_handler(
            EventHandler(self._enqueue, lambda _old, new: self._enqueue(new), self._enqueue)
        )

    def _enqueue(self, csr: Object) -> None:
        self.queue.add(object_key(csr))

    async def sync_handler(self, key: str) -> None:
        csr = self.csrs.indexer.get(key)
        if csr is None or (csr.get("status") or {}).get("certificate"):
            return  # gone, or already has a certificate: nothing left to do
        await self.handle(csr)
