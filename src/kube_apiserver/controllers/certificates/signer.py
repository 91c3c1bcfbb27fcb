"""The csrsigning controller (pkg/controller/certificates/signer): signs the approved CSRs of the built-in
signers with a CA from files (--cluster-signing-cert-file/--cluster-signing-key-file, or one pair per
signer), after checking what each signer allows (pkg/apis/certificates/v1/helpers.go); a request it
refuses gets the Failed condition with reason SignerValidationFailure. Certificates last
--cluster-signing-duration, or spec.expirationSeconds when shorter (10 minutes at least), and are
backdated 5 minutes unless short-lived (8 hours or less), as upstream's PermissiveSigningPolicy."""

from __future__ import annotations

import base64
import datetime
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ...apimachinery import errors
from ...apimachinery.meta import now_rfc3339
from ...client.informers import SharedInformerFactory
from ...client.rest import Client
from .config import (
    DEFAULT_DURATION,
    KUBE_APISERVER_CLIENT,
    KUBELET_CLIENT,
    KUBELET_SERVING,
    CSRSigningConfiguration,
)
from .csr import (
    FAILED,
    GROUP,
    RESOURCE,
    VERSION,
    CertificateController,
    has_true_condition,
    is_approved,
    parse_csr,
)

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
BACKDATE = datetime.timedelta(minutes=5)  # less than the shortest duration a CSR may get
SHORT = datetime.timedelta(hours=8)  # 5 minutes of backdating is roughly 1% of 8 hours
MIN_DURATION = datetime.timedelta(minutes=10)  # twice the backdating


# ---- the certificate authority ----

KEY_USAGES = {
    "signing": "digital_signature",
    "digital signature": "digital_signature",
    "content commitment": "content_commitment",
    "key encipherment": "key_encipherment",
    "key agreement": "key_agreement",
    "data encipherment": "data_encipherment",
    "cert sign": "key_cert_sign",
    "crl sign": "crl_sign",
    "encipher only": "encipher_only",
    "decipher only": "decipher_only",
}
EXT_KEY_USAGES = {  # in Go's ExtKeyUsage order: the extension lists them sorted by it
    "any": (0, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE),
    "server auth": (1, ExtendedKeyUsageOID.SERVER_AUTH),
    "client auth": (2, ExtendedKeyUsageOID.CLIENT_AUTH),
    "code signing": (3, ExtendedKeyUsageOID.CODE_SIGNING),
    "email protection": (4, ExtendedKeyUsageOID.EMAIL_PROTECTION),
    "s/mime": (4, ExtendedKeyUsageOID.EMAIL_PROTECTION),
    "ipsec end system": (5, x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5")),
    "ipsec tunnel": (6, x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6")),
    "ipsec user": (7, x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7")),
    "timestamping": (8, ExtendedKeyUsageOID.TIME_STAMPING),
    "ocsp signing": (9, ExtendedKeyUsageOID.OCSP_SIGNING),
    "microsoft sgc": (10, x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3")),
    "netscape sgc": (11, x509.ObjectIdentifier("2.16.840.1.113730.4.1")),
}


def _key_usage(usages: list[str]) -> tuple[x509.KeyUsage | None, x509.ExtendedKeyUsage | None]:
    """keyUsagesFromStrings; raises ValueError naming the usages it does not know."""
    unknown = [u for u in usages if u not in KEY_USAGES and u not in EXT_KEY_USAGES]
    if unknown:
        raise ValueError("unrecognized usage values: [" + " ".join(f'"{u}"' for u in unknown) + "]")
    bits = {KEY_USAGES[u] for u in usages if u in KEY_USAGES}
    names = (
        "digital_signature",
        "content_commitment",
        "key_encipherment",
        "data_encipherment",
        "key_agreement",
        "key_cert_sign",
        "crl_sign",
        "encipher_only",
        "decipher_only",
    )
    key_usage = None
    if bits:
        flags = {name: name in bits for name in names}
        agreement = flags["key_agreement"]
        flags["encipher_only"] = flags["encipher_only"] and agreement  # meaningful only with key agreement
        flags["decipher_only"] = flags["decipher_only"] and agreement
        key_usage = x509.KeyUsage(**flags)
    extended = sorted({EXT_KEY_USAGES[u] for u in usages if u in EXT_KEY_USAGES}, key=lambda e: e[0])
    return key_usage, x509.ExtendedKeyUsage([oid for _, oid in extended]) if extended else None


def _hash_for(key: Any) -> hashes.HashAlgorithm | None:
    """The signature hash Go picks for the CA's key."""
    if isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
        return None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {384: hashes.SHA384(), 521: hashes.SHA512()}.get(key.curve.key_size, hashes.SHA256())
    return hashes.SHA256()


def boundaries(
    now: datetime.datetime, ttl: datetime.timedelta, ca_not_after: datetime.datetime
) -> tuple[datetime.datetime, datetime.datetime]:
    """NotBefore backdated for clock skew; a short-lived certificate keeps its whole duration from now,
    a longer one ends `ttl` after NotBefore; never past the CA's own NotAfter."""
    not_before = now - BACKDATE
    not_after = now + ttl if ttl <= SHORT else not_before + ttl
    return min(not_before, ca_not_after), min(not_after, ca_not_after)


@dataclass(frozen=True)
class CertificateAuthority:
    certificate: x509.Certificate
    key: Any

    @classmethod
    def load(cls, cert_file: str, key_file: str) -> CertificateAuthority:
        """The CA in the files (the first certificate of the bundle); raises OSError or ValueError."""
        with open(cert_file, "rb") as f:
            certs = x509.load_pem_x509_certificates(f.read())
        with open(key_file, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey):
            raise ValueError(f"{key_file}: not an RSA, ECDSA or Ed25519 private key")
        if certs[0].public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        ) != key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        ):
            raise ValueError(f"{cert_file} and {key_file}: private key does not match public key")
        return cls(certs[0], key)

    def sign(
        self,
        request: x509.CertificateSigningRequest,
        usages: list[str],
        ttl: datetime.timedelta,
        now: datetime.datetime,
    ) -> bytes:
        """CertificateAuthority.Sign with the PermissiveSigningPolicy: the request's subject and SANs,
        the usages asked for, not a CA; the certificate as PEM. Raises ValueError."""
        ca_not_after = self.certificate.not_valid_after_utc
        if now > ca_not_after:
            raise ValueError(f"the signer has expired: NotAfter={ca_not_after}")
        not_before, not_after = boundaries(now, ttl, ca_not_after)
        key_usage, extended = _key_usage(usages)
        builder = (
            x509.CertificateBuilder()
            .subject_name(request.subject)
            .issuer_name(self.certificate.subject)
            .public_key(request.public_key())  # type: ignore[arg-type]
            .serial_number(secrets.randbits(128) or 1)
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if key_usage is not None:
            builder = builder.add_extension(key_usage, critical=True)
        if extended is not None:
            builder = builder.add_extension(extended, critical=False)
        builder = self._with_authority_key_id(builder)
        names = _subject_alternative_names(request)
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, _hash_for(self.key))  # type: ignore[arg-type]
        return cert.public_bytes(serialization.Encoding.PEM)

    def _with_authority_key_id(self, builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
        try:
            ski = self.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        except x509.ExtensionNotFound:
            return builder
        return builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False
        )


class CAProvider:
    """A CA read from its files, read again when either file changes (upstream's caProvider reloads
    them too), so that a rotated CA signs from then on without a restart."""

    def __init__(self, cert_file: str, key_file: str):
        self.files = (cert_file, key_file)
        self._stamp: tuple[int, ...] | None = None
        self._authority: CertificateAuthority | None = None
        self.current()  # the first read: raises OSError or ValueError

    def current(self) -> CertificateAuthority:
        """The CA as the files now hold it; the last good one while they are being replaced."""
        try:
            stamp = tuple(os.stat(f).st_mtime_ns for f in self.files)
            if stamp != self._stamp:
                self._authority, self._stamp = CertificateAuthority.load(*self.files), stamp
        except (OSError, ValueError):
            if self._authority is None:
                raise
            log.warning("csrsigning: keeping the CA loaded before: %s and %s do not load", *self.files)
        assert self._authority is not None
        return self._authority


def _subject_alternative_names(request: x509.CertificateSigningRequest) -> list[x509.GeneralName]:
    """The request's DNS names, IP addresses, emails and URIs (the template forwards these, no other
    extension)."""
    try:
        sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [
        n
        for n in sans
        if isinstance(n, x509.DNSName | x509.IPAddress | x509.RFC822Name | x509.UniformResourceIdentifier)
    ]


# ---- what each signer accepts (pkg/apis/certificates/v1/helpers.go) ----


def _sans_of(request: x509.CertificateSigningRequest, kind: type) -> list[Any]:
    return [n for n in _subject_alternative_names(request) if isinstance(n, kind)]


def _organizations(request: x509.CertificateSigningRequest) -> list[str]:
    return [str(a.value) for a in request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def common_name(request: x509.CertificateSigningRequest) -> str:
    names = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


KUBELET_SERVING_USAGES = (
    {"digital signature", "key encipherment", "server auth"},
    {"digital signature", "server auth"},
)
KUBELET_CLIENT_USAGES = (
    {"digital signature", "key encipherment", "client auth"},
    {"digital signature", "client auth"},
)


def _usages_list(required: set[str]) -> str:
    return "[" + " ".join(sorted(required)) + "]"


def validate_kubelet_serving(request: x509.CertificateSigningRequest, usages: set[str]) -> str | None:
    """ValidateKubeletServingCSR: what is wrong, or None."""
    if _organizations(request) != ["system:nodes"]:
        return "subject organization is not system:nodes"
    if not _sans_of(request, x509.DNSName) and not _sans_of(request, x509.IPAddress):
        return "DNS or IP subjectAltName is required"
    if _sans_of(request, x509.RFC822Name):
        return "Email subjectAltNames are not allowed"
    if _sans_of(request, x509.UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    if usages not in KUBELET_SERVING_USAGES:
        return f"usages did not match {_usages_list(KUBELET_SERVING_USAGES[0])}"
    if not common_name(request).startswith("system:node:"):
        return "subject common name does not begin with system:node:"
    return None


def validate_kubelet_client(request: x509.CertificateSigningRequest, usages: set[str]) -> str | None:
    """ValidateKubeletClientCSR: what is wrong, or None."""
    if _organizations(request) != ["system:nodes"]:
        return "subject organization is not system:nodes"
    for kind, what in (
        (x509.DNSName, "DNS"),
        (x509.RFC822Name, "Email"),
        (x509.IPAddress, "IP"),
        (x509.UniformResourceIdentifier, "URI"),
    ):
        if _sans_of(request, kind):
            return f"{what} subjectAltNames are not allowed"
    if not common_name(request).startswith("system:node:"):
        return "subject common name does not begin with system:node:"
    if usages not in KUBELET_CLIENT_USAGES:
        return f"usages did not match {_usages_list(KUBELET_CLIENT_USAGES[0])}"
    return None


def validate_kube_apiserver_client(_request: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    """validAPIServerClientUsages: client auth required; digital signature and key encipherment allowed."""
    for usage in usages:
        if usage not in ("digital signature", "key encipherment", "client auth"):
            return f"invalid usage for client certificate: {usage}"
    if "client auth" not in usages:
        return "missing required usage for client certificate: client auth"
    return None


def signer_validation_error(
    signer_name: str, request: x509.CertificateSigningRequest, usages: list[str]
) -> str | None:
    """Why the signer refuses the request (the isRequestForSignerFn error), or None. legacy-unknown
    accepts anything, for compatibility with v1beta1."""
    if signer_name == KUBELET_SERVING:
        return validate_kubelet_serving(request, set(usages))
    if signer_name == KUBELET_CLIENT:
        return validate_kubelet_client(request, set(usages))
    if signer_name == KUBE_APISERVER_CLIENT:
        return validate_kube_apiserver_client(request, usages)
    return None


def certificate_duration(max_duration: float, expiration_seconds: Any) -> datetime.timedelta:
    """signer.duration: spec.expirationSeconds when shorter than the maximum, never under 10 minutes."""
    longest = datetime.timedelta(seconds=max_duration)
    if not isinstance(expiration_seconds, int) or isinstance(expiration_seconds, bool):
        return longest
    return max(MIN_DURATION, min(longest, datetime.timedelta(seconds=expiration_seconds)))


class CSRSigningController(CertificateController):
    """One controller for the built-in signers that have a CA (upstream runs one per signer, each with
    its queue: the work and the outcome are the same)."""

    def __init__(
        self,
        client: Client,
        informers: SharedInformerFactory,
        authorities: dict[str, CAProvider],
        duration: float = DEFAULT_DURATION,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ):
        super().__init__("csrsigning", informers.for_resource(GROUP, VERSION, RESOURCE), self._handle)
        self.client = client
        self.authorities = authorities
        self.duration = duration
        self.clock = clock

    async def _handle(self, csr: Object) -> None:
        if not is_approved(csr) or has_true_condition(csr, FAILED):
            return
        spec = csr.get("spec") or {}
        signer_name = spec.get("signerName", "")
        provider = self.authorities.get(signer_name)
        if provider is None:
            return  # not ours (or a built-in signer without a CA here)
        name = csr["metadata"]["name"]
        try:
            request = parse_csr(csr)
        except ValueError as err:
            log.warning("csrsigning: unable to parse csr %r: %s", name, err)
            return  # the server validated it on create: nothing a retry changes
        usages = [u for u in spec.get("usages") or () if isinstance(u, str)]
        refusal = signer_validation_error(signer_name, request, usages)
        if refusal is not None:
            await self._fail(csr, refusal)
            return
        try:
            pem = provider.current().sign(
                request,
                usages,
                certificate_duration(self.duration, spec.get("expirationSeconds")),
                self.clock(),
            )
        except (ValueError, TypeError) as err:  # retried with backoff: the CA may be rotated meanwhile
            raise SigningError(f"error auto signing csr {name!r}: {err}") from None
        await self._write_status(csr, {**(csr.get("status") or {}), "certificate": _b64(pem)})

    async def _fail(self, csr: Object, message: str) -> None:
        failed = {
            "type": FAILED,
            "status": "True",
            "reason": "SignerValidationFailure",
            "message": message,
            "lastUpdateTime": now_rfc3339(),
        }
        status = dict(csr.get("status") or {})
        status["conditions"] = [*(status.get("conditions") or ()), failed]
        await self._write_status(csr, status)

    async def _write_status(self, csr: Object, status: Object) -> None:
        api = self.client.resource(GROUP, VERSION, RESOURCE)
        try:
            await api.update_status({**csr, "status": status})
        except errors.StatusError as err:
            if err.code != 404:  # a conflict: the informer brings the newer CSR, tried again then
                raise


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class SigningError(Exception):
    pass


def load_authorities(config: CSRSigningConfiguration) -> dict[str, CAProvider]:
    """Each signer's CA, one provider per pair of files; a pair that does not load is logged and its
    signers skipped (kube-controller-manager would fail to start that controller)."""
    loaded: dict[tuple[str, str], CAProvider | None] = {}
    authorities = {}
    for signer_name, pair in config.signer_files().items():
        if pair not in loaded:
            try:
                loaded[pair] = CAProvider(*pair)
            except (OSError, ValueError) as err:
                log.error(
                    "csrsigning: skipping %s: unable to load the CA from %s and %s: %s",
                    signer_name,
                    pair[0],
                    pair[1],
                    err,
                )
                loaded[pair] = None
        authority = loaded[pair]
        if authority is not None:
            authorities[signer_name] = authority
    return authorities
