"""Shared builders and matchers for the CRD validation tests (ported from upstream validation_test.go)."""

from __future__ import annotations

import base64
import copy
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kube_apiserver.apiextensions.validation.options import Options

Object = dict[str, Any]

# Go's zero validationOptions: every requirement off (what upstream's schema tests start from)
GO_ZERO = Options(allow_defaults=False, require_recognized_conversion_review_version=False,
                  require_immutable_names=False, require_openapi_schema=False, require_valid_property_type=False,
                  require_structural_schema=False, require_pruned_defaults=False, require_atomic_set_type=False,
                  require_map_list_keys_map_set_validation=False, allow_invalid_ca_bundle=False)

REQUIRED, INVALID, UNSUPPORTED = "FieldValueRequired", "FieldValueInvalid", "FieldValueNotSupported"
FORBIDDEN, DUPLICATE, TOO_MANY = "FieldValueForbidden", "FieldValueDuplicate", "FieldValueTooMany"

def example_cert_b64() -> str:
    """A fresh self-signed CA certificate for example.com, as caBundle carries it (base64 of the PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme Co")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("example.com")]), critical=False)
            .sign(key, hashes.SHA256()))
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


def version(name: str, served: bool = True, storage: bool = True, schema: Object | None = None,
            **extra: Any) -> Object:
    v: Object = {"name": name, "served": served, "storage": storage}
    if schema is not None:
        v["schema"] = {"openAPIV3Schema": schema}
    v.update(extra)
    return v


def make_crd(versions: list[Object] | None = None, schema: Object | None = None, **spec: Any) -> Object:
    """A valid v1 CRD plural.group.com (one version "version" with an object schema) with overrides."""
    if versions is None:
        versions = [version("version", schema=schema if schema is not None else {"type": "object"})]
    base: Object = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "plural.group.com"},
        "spec": {
            "group": "group.com",
            "scope": "Cluster",
            "names": {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"},
            "versions": versions,
            "conversion": {"strategy": "None"},
        },
        "status": {"storedVersions": [v["name"] for v in versions if v.get("storage")][:1] or ["version"]},
    }
    base["spec"].update(spec)
    return copy.deepcopy(base)


def webhook(**client: Any) -> Object:
    return {"strategy": "Webhook", "webhook": {"clientConfig": client, "conversionReviewVersions": ["v1beta1"]}}


def established(crd: Object) -> Object:
    crd = copy.deepcopy(crd)
    crd["status"]["conditions"] = [{"type": "Established", "status": "True"}]
    return crd


def pairs(errs: list[Any]) -> list[tuple[str, str]]:
    return sorted((e.type.value, e.field) for e in errs)


def assert_errors(errs: list[Any], *expected: tuple[str, str] | tuple[str, str, str]) -> None:
    """Each expected (type, field[, substring]) matches a distinct error, and no error is left over
    (upstream's validationMatch loop)."""
    remaining = list(errs)
    for exp in expected:
        typ, fld = exp[0], exp[1]
        sub = exp[2] if len(exp) > 2 else ""  # type: ignore[misc]
        match = next((e for e in remaining if e.type.value == typ and e.field == fld and sub in str(e)), None)
        assert match is not None, f"expected {exp} in {[str(e) for e in errs]}"
        remaining.remove(match)
    assert not remaining, f"unexpected errors: {[str(e) for e in remaining]}"
