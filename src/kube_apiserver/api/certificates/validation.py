"""CertificateSigningRequest validation (pkg/apis/certificates/validation and ValidateSignerName of
pkg/apis/core/validation, v1.34)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ...apimachinery import errors, field, jsontypes, validation
from ...apimachinery.field import ErrorList, Path, go_json, go_quote
from ...apimachinery.meta import spec_of, status_of
from . import pem

Object = dict[str, Any]
KIND = "CertificateSigningRequest"
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
USAGES = tuple(sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth",
    "client auth", "code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel",
    "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")))
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
TRUE_ONLY = (APPROVED, DENIED, FAILED)
STATUS_VALUES = ("False", "True", "Unknown")
MIN_EXPIRATION_SECONDS = 600
DNS1123_SUBDOMAIN_MAX, DNS1123_LABEL_MAX = 253, 63
SPEC, CONDITIONS, CERTIFICATE = Path("spec"), Path("status", "conditions"), Path("status", "certificate")


@dataclass(frozen=True)
class Options:
    """What an update path may change (the approval and status subresources)."""

    approval: bool = False  # allowSettingApprovalConditions
    certificate: bool = False  # allowSettingCertificate


def conditions_of(obj: Object) -> list[Object]:
    return [c if isinstance(c, dict) else {} for c in status_of(obj).get("conditions") or []]


def decode_bytes(value: Any, field_name: str) -> bytes | None:
    """A []byte field as JSON carries it (base64); undecodable data fails decoding (400)."""
    if value is None:
        return None
    prefix = f'{KIND} in version "v1" cannot be handled as a {KIND}'
    if not isinstance(value, str):
        raise errors.bad_request(f"{prefix}: json: cannot unmarshal {type(value).__name__} into Go struct field "
                                 f"{field_name} of type []uint8")
    try:
        return jsontypes.decode_base64(value)
    except jsontypes.CorruptBase64 as err:
        raise errors.bad_request(f"{prefix}: {err}") from None


def _label_errors(path: Path, segment: str, check: Any) -> ErrorList:
    for label in segment.split("."):
        msgs = check(label)
        if msgs:
            return [field.invalid(path, segment, f"validating label {go_quote(label)}: {m}") for m in msgs]
    return []


def validate_signer_name(path: Path, signer: str) -> ErrorList:
    """ValidateSignerName: `<fully qualified domain>/<path of DNS subdomains>`."""
    if not signer:
        return [field.required(path, "")]
    segments = signer.split("/")
    if len(segments) != 2:
        return [field.invalid(path, signer, "must be a fully qualified domain and path of the form "
                                            "'example.com/signer-name'")]
    domain, rest = segments
    errs: ErrorList = []
    if len(domain) > DNS1123_SUBDOMAIN_MAX:
        errs.append(field.too_long(path, "", DNS1123_SUBDOMAIN_MAX))
    errs += _label_errors(path, domain, validation.is_dns1123_label)
    if len(domain.split(".")) < 2:
        errs.append(field.invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    errs += _label_errors(path, rest, validation.is_dns1123_subdomain)
    max_length = DNS1123_SUBDOMAIN_MAX + (DNS1123_SUBDOMAIN_MAX + DNS1123_LABEL_MAX + 1) + 1
    if len(signer) > max_length:
        errs.append(field.too_long(path, "", max_length))
    return errs


def validate_usages(usages: list[Any]) -> ErrorList:
    path = SPEC.child("usages")
    errs: ErrorList = [] if usages else [field.required(path, "")]
    errs += [field.not_supported(path.index(i), u, USAGES) for i, u in enumerate(usages) if u not in USAGES]
    errs += [field.duplicate(path.index(i), u) for i, u in enumerate(usages) if u in usages[:i]]
    return errs


def validate_condition_set(conditions: list[Object]) -> ErrorList:
    """validateConditions: types, True-only statuses, Approved/Denied exclusive, unique types."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        ctype, status = condition.get("type") or "", condition.get("status") or ""
        if not ctype:
            errs.append(field.required(CONDITIONS.index(i).child("type"), ""))
        allowed = ("True",) if ctype in TRUE_ONLY else STATUS_VALUES
        if not status:
            errs.append(field.required(CONDITIONS.index(i).child("status"), ""))
        elif status not in allowed:
            errs.append(field.not_supported(CONDITIONS.index(i).child("status"), status, allowed))
        other = {APPROVED: DENIED, DENIED: APPROVED}.get(ctype)
        if other in seen:
            errs.append(field.invalid(CONDITIONS, ctype, "Approved and Denied conditions are mutually exclusive")
                        .with_origin("zeroOrOneOf"))
        if ctype in seen:
            errs.append(field.duplicate(CONDITIONS.index(i).child("type"), ctype))
        seen.add(ctype)
    return errs


def _request_errors(spec: Object) -> ErrorList:
    raw = spec.get("request")
    request = decode_bytes(raw, "CertificateSigningRequestSpec.spec.request")
    why = pem.request_error(request or b"")
    if why is None:
        return []
    bad = None if request is None else base64.b64encode(request).decode()
    return [field.invalid(SPEC.child("request"), bad, why)]


def validate_csr(obj: Object) -> ErrorList:
    """validateCertificateSigningRequest (the metadata part is the strategy's)."""
    spec = spec_of(obj)
    errs = _request_errors(spec)
    errs += validate_usages(list(spec.get("usages") or []))
    signer = spec.get("signerName") or ""
    if signer == LEGACY_UNKNOWN_SIGNER:
        errs.append(field.invalid(SPEC.child("signerName"), signer,
                                  "the legacy signerName is not allowed via this API version"))
    else:
        errs += validate_signer_name(SPEC.child("signerName"), signer)
    expiration = spec.get("expirationSeconds")
    if isinstance(expiration, int) and expiration < MIN_EXPIRATION_SECONDS:
        errs.append(field.invalid(SPEC.child("expirationSeconds"), expiration,
                                  "may not specify a duration less than 600 seconds (10 minutes)"))
    errs += validate_condition_set(conditions_of(obj))
    certificate = decode_bytes(status_of(obj).get("certificate"), "CertificateSigningRequestStatus.status.certificate")
    why = pem.certificate_error(certificate or b"")
    if why is not None:
        errs.append(field.invalid(CERTIFICATE, "<certificate data>", why))
    return errs


def _of_type(conditions: list[Object], ctype: str) -> list[Object]:
    return [c for c in conditions if c.get("type") == ctype]


def validate_transitions(new: Object, old: Object, opts: Options) -> ErrorList:
    """validateCertificateSigningRequestUpdate: what an update of each path may change."""
    errs: ErrorList = []
    new_conditions, old_conditions = conditions_of(new), conditions_of(old)
    for ctype in TRUE_ONLY:
        if len(_of_type(new_conditions, ctype)) < len(_of_type(old_conditions, ctype)):
            errs.append(field.forbidden(CONDITIONS, f"updates may not remove a condition of type {go_quote(ctype)}"))
    for ctype in () if opts.approval else (APPROVED, DENIED):
        added, removed = _of_type(new_conditions, ctype), _of_type(old_conditions, ctype)
        if len(added) > len(removed):
            errs.append(field.forbidden(CONDITIONS, f"updates may not add a condition of type {go_quote(ctype)}"))
        elif len(added) == len(removed) and added != removed:
            errs.append(field.forbidden(CONDITIONS, f"updates may not modify a condition of type {go_quote(ctype)}"
                                                    f"\n-{go_json(removed)}\n+{go_json(added)}"))
    new_cert, old_cert = status_of(new).get("certificate") or "", status_of(old).get("certificate") or ""
    if new_cert != old_cert:
        if not opts.certificate:
            errs.append(field.forbidden(CERTIFICATE, "updates may not set certificate content"))
        elif old_cert:
            errs.append(field.forbidden(CERTIFICATE, "updates may not modify existing certificate content"))
    return errs
