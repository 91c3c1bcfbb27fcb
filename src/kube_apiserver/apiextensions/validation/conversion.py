"""spec.conversion (validateCustomResourceConversion) on the internal shape: strategy,
webhookClientConfig and conversionReviewVersions side by side."""

from __future__ import annotations

from typing import Any

from ...admission.webhook import validation as webhook
from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from ...apimachinery.validation import is_dns1035_label
from .options import Options

Object = dict[str, Any]
NONE_CONVERTER, WEBHOOK_CONVERTER = "None", "Webhook"
# The ConversionReview versions the *prior* API server release understands.
ACCEPTED_CONVERSION_REVIEW_VERSIONS = ("v1", "v1beta1")
_NOT_WEBHOOK = "should not be set when strategy is not set to Webhook"


def validate_enum(path: Path, value: str, accepted: list[str], required: bool) -> ErrorList:
    """validateEnumStrings."""
    if not value:
        return [field.required(path, "")] if required else []
    return [] if value in accepted else [field.not_supported(path, value, accepted)]


def has_valid_conversion_review_version_or_empty(versions: list[Any] | None) -> bool:
    return not versions or any(v in ACCEPTED_CONVERSION_REVIEW_VERSIONS for v in versions)


def validate_conversion_review_versions(
    versions: list[Any] | None, require_recognized: bool, path: Path
) -> ErrorList:
    if not versions:
        return [field.required(path, "")]
    errs: ErrorList = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        version = version if isinstance(version, str) else ""
        if version in seen:
            errs.append(field.invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [field.invalid(path.index(i), version, m) for m in is_dns1035_label(version)]
    if require_recognized and not seen.intersection(ACCEPTED_CONVERSION_REVIEW_VERSIONS):
        errs.append(
            field.invalid(
                path,
                versions,
                "must include at least one of " + ", ".join(ACCEPTED_CONVERSION_REVIEW_VERSIONS),
            )
        )
    return errs


def validate_conversion(conversion: Object | None, opts: Options, path: Path) -> ErrorList:
    """validateCustomResourceConversion."""
    if conversion is None:
        return []
    strategy = conversion.get("strategy") or ""
    errs = validate_enum(path.child("strategy"), strategy, [NONE_CONVERTER, WEBHOOK_CONVERTER], True)
    client = conversion.get("webhookClientConfig")
    if strategy != WEBHOOK_CONVERTER:
        if client is not None:
            errs.append(field.forbidden(path.child("webhookClientConfig"), _NOT_WEBHOOK))
        if conversion.get("conversionReviewVersions"):
            errs.append(field.forbidden(path.child("conversionReviewVersions"), _NOT_WEBHOOK))
        return errs
    if not isinstance(client, dict):
        errs.append(
            field.required(path.child("webhookClientConfig"), "required when strategy is set to Webhook")
        )
    else:
        errs += _validate_client_config(client, opts, path.child("webhookClientConfig"))
    return errs + validate_conversion_review_versions(
        conversion.get("conversionReviewVersions"),
        opts.require_recognized_conversion_review_version,
        path.child("conversionReviewVersions"),
    )


def _validate_client_config(client: Object, opts: Options, path: Path) -> ErrorList:
    url, service = client.get("url"), client.get("service")
    errs: ErrorList = []
    if (url is None) == (service is None):
        errs.append(field.required(path, "exactly one of url or service is required"))
    elif url is not None:
        errs += webhook.validate_webhook_url(path.child("url"), url if isinstance(url, str) else "", True)
    else:
        errs += webhook.validate_webhook_service(
            path.child("service"), service if isinstance(service, dict) else {}
        )
    ca_bundle = client.get("caBundle")
    if ca_bundle and not opts.allow_invalid_ca_bundle:
        errs += webhook.validate_ca_bundle(path.child("caBundle"), ca_bundle)
    return errs


def allow_invalid_ca_bundle(old_spec: Object, old_established: bool) -> bool:
    """allowInvalidCABundle: only before the CRD is established, or if the stored bundle is already bad."""
    if not old_established:
        return True
    conversion = old_spec.get("conversion") or {}
    client = conversion.get("webhookClientConfig") or {}
    ca_bundle = client.get("caBundle")
    if not ca_bundle:
        return False
    return webhook.ca_bundle_error(webhook.ca_bundle_bytes(ca_bundle)) is not None
