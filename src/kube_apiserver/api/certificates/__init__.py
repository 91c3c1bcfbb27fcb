"""certificates.k8s.io/v1: CertificateSigningRequest with its /status and /approval subresources
(pkg/apis/certificates, pkg/registry/certificates/certificates)."""

from __future__ import annotations

from typing import Any

from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.subresource import StatusREST
from ...registry.table import AGE, NAME, TableConvertor, age, human_duration, name
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from .strategy import CSRStrategy, CSRSubresourceStrategy, approval_strategy, status_strategy
from .validation import APPROVED, DENIED, FAILED, conditions_of, spec_of, status_of

Object = dict[str, Any]
GROUP = "certificates.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "certificatesigningrequests", "CertificateSigningRequest",
                    "certificatesigningrequest", False, short_names=("csr",))


class CSRSubresourceREST(StatusREST):
    """GET, PUT and PATCH of /status or /approval, each with its own strategy."""

    def __init__(self, parent: Store, subresource: str, strategy: CSRSubresourceStrategy):
        super().__init__(parent, subresource, strategy.keep)
        self.strategy = self.store.strategy = strategy


def condition_summary(obj: Object) -> str:
    """extractCSRStatus: Denied over Approved over Pending, then Failed and Issued."""
    types = {c.get("type") for c in conditions_of(obj)}
    summary = "Denied" if DENIED in types else "Approved" if APPROVED in types else "Pending"
    if FAILED in types:
        summary += ",Failed"
    if status_of(obj).get("certificate"):
        summary += ",Issued"
    return summary


def requested_duration(obj: Object) -> str:
    seconds = spec_of(obj).get("expirationSeconds")
    return "<none>" if seconds is None else human_duration(seconds)


TABLE = TableConvertor((
    NAME,
    AGE,
    TableColumn("SignerName", "string", "", "Requested signer for the request. It is a qualified name in the "
                "form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client "
                "certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a "
                "kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. "
                "Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers "
                "happens out of band. You can select on this field using `spec.signerName`."),
    TableColumn("Requestor", "string", "", "Base64-encoded PKCS#10 CSR data"),
    TableColumn("RequestedDuration", "string", "", "expirationSeconds is the requested duration of validity of "
                "the issued certificate. The certificate signer may issue a certificate with a different validity "
                "duration so a client must check the delta between the notBefore and and notAfter fields in the "
                "issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of "
                "the well-known Kubernetes signers will honor this field as long as the requested duration is not "
                "greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to "
                "the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various "
                "reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     "
                "implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the "
                "requested duration\n  3. Signer whose configured minimum is longer than the requested "
                "duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes."),
    TableColumn("Condition", "string", "", "Conditions applied to the request, such as approval or denial."),
), lambda o: [name(o), age(o), spec_of(o).get("signerName") or "<none>", spec_of(o).get("username") or "",
              requested_duration(o), condition_summary(o)])


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    strategy = CSRStrategy(INFO)
    store = Store(INFO, strategy, storage, "/registry/certificatesigningrequests", TABLE)
    return APIGroupInfo(GROUP, {"v1": {
        "certificatesigningrequests": store,
        "certificatesigningrequests/status": CSRSubresourceREST(store, "status", status_strategy(strategy)),
        "certificatesigningrequests/approval": CSRSubresourceREST(store, "approval", approval_strategy(strategy)),
    }})
