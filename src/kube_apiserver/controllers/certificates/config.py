"""The csrsigning controller's flags (kube-controller-manager's CSRSigningControllerConfiguration), apart from
the signer, so that checking them does not import it and its cryptography."""

from __future__ import annotations

from dataclasses import dataclass, fields

# The built-in signers (pkg/apis/certificates)
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"
DEFAULT_DURATION = 365 * 24 * 3600.0


@dataclass
class CSRSigningConfiguration:
    """kube-controller-manager's CSRSigningControllerConfiguration: the CA files, the generic pair or one
    pair per signer (not both), and the longest duration a certificate is given."""

    cluster_signing_cert_file: str = ""
    cluster_signing_key_file: str = ""
    kubelet_serving_cert_file: str = ""
    kubelet_serving_key_file: str = ""
    kubelet_client_cert_file: str = ""
    kubelet_client_key_file: str = ""
    kube_apiserver_client_cert_file: str = ""
    kube_apiserver_client_key_file: str = ""
    legacy_unknown_cert_file: str = ""
    legacy_unknown_key_file: str = ""
    cluster_signing_duration: float = DEFAULT_DURATION

    def specific_files_set(self) -> bool:
        return any(
            getattr(self, f.name)
            for f in fields(self)
            if f.name.endswith("_file") and not f.name.startswith("cluster_signing_")
        )

    def validate(self) -> list[str]:
        errs = []
        if (self.cluster_signing_cert_file or self.cluster_signing_key_file) and self.specific_files_set():
            errs.append(
                "cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file "
                "flags at the same time"
            )
        if self.cluster_signing_duration <= 0:
            errs.append("--cluster-signing-duration must be positive")
        return errs

    def default_to(self, cert_file: str, key_file: str) -> None:
        """The server's own CA signs when no CA file was given."""
        if not self.specific_files_set() and not (
            self.cluster_signing_cert_file or self.cluster_signing_key_file
        ):
            self.cluster_signing_cert_file, self.cluster_signing_key_file = cert_file, key_file

    def signer_files(self) -> dict[str, tuple[str, str]]:
        """Each built-in signer's (cert, key) files: its own pair, else the generic one; a signer without
        files does not run (getKubeletServingSignerFiles and the like)."""
        generic = (self.cluster_signing_cert_file, self.cluster_signing_key_file)
        specific = {
            KUBELET_SERVING: (self.kubelet_serving_cert_file, self.kubelet_serving_key_file),
            KUBELET_CLIENT: (self.kubelet_client_cert_file, self.kubelet_client_key_file),
            KUBE_APISERVER_CLIENT: (
                self.kube_apiserver_client_cert_file,
                self.kube_apiserver_client_key_file,
            ),
            LEGACY_UNKNOWN: (self.legacy_unknown_cert_file, self.legacy_unknown_key_file),
        }
        if not self.specific_files_set():
            return {name: generic for name in specific} if all(generic) else {}
        return {name: pair for name, pair in specific.items() if any(pair)}
