"""Status (accepted names, stored versions) and the object-level rules: API approval of protected
groups and the one-way spec.preserveUnknownFields."""

from __future__ import annotations

from typing import Any

from ...admission.webhook.validation import parse_url
from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from .names import validate_names

Object = dict[str, Any]
API_APPROVED_ANNOTATION = "api-approved.kubernetes.io"
_KEP = "see https://github.com/kubernetes/enhancements/pull/1111"


def validate_status(status: Object, path: Path) -> ErrorList:
    """ValidateCustomResourceDefinitionStatus."""
    return validate_names(status.get("acceptedNames") or {}, path.child("acceptedNames"))


def validate_stored_versions(stored: list[Any] | None, versions: list[Object], path: Path) -> ErrorList:
    """ValidateCustomResourceDefinitionStoredVersions."""
    if not stored:
        return [field.invalid(path, stored, "must have at least one stored version")]
    errs: ErrorList = []
    remaining = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name") or ""
        if version.get("storage") and name not in remaining:
            errs.append(field.invalid(path, stored, "must have the storage version " + name))
        remaining.pop(name, None)
    for name, i in remaining.items():
        errs.append(
            field.invalid(
                path.index(i),
                name,
                (
                    f"missing from spec.versions; {name} was previously a storage version, and must remain "
                    f"in spec.versions until a storage migration ensures no data remains persisted in {name} "
                    f"and removes {name} from status.storedVersions"
                ),
            )
        )
    return errs


def is_protected_community_group(group: str) -> bool:
    """Groups owned by the Kubernetes project need an API review approval."""
    return any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io"))


def api_approval_state(annotations: Object | None) -> tuple[str, str]:
    """GetAPIApprovalState: (state, reason)."""
    value = (annotations or {}).get(API_APPROVED_ANNOTATION) or ""
    if not value:
        return (
            "Missing",
            f'protected groups must have approval annotation "{API_APPROVED_ANNOTATION}", {_KEP}',
        )
    if value.startswith("unapproved"):
        return "Bypassed", f'not approved: "{value}"'
    try:
        parts = parse_url(value)
    except ValueError:
        parts = {}
    if not parts.get("host") or not parts.get("scheme"):
        return "Invalid", (
            f'protected groups must have approval annotation "{API_APPROVED_ANNOTATION}" with '
            f'either a URL or a reason starting with "unapproved", {_KEP}'
        )
    return "Approved", f"approved in {value}"


def validate_api_approval(crd: Object, old: Object | None, group: str) -> ErrorList:
    """validateAPIApproval: only checked when the approval state changes."""
    if not is_protected_community_group(group):
        return []
    annotations = (crd.get("metadata") or {}).get("annotations") or {}
    state, reason = api_approval_state(annotations)
    if old is not None and api_approval_state((old.get("metadata") or {}).get("annotations"))[0] == state:
        return []
    path = Path("metadata", "annotations").key(API_APPROVED_ANNOTATION)
    if state == "Missing":
        return [field.required(path, reason)]
    if state == "Invalid":
        return [field.invalid(path, annotations.get(API_APPROVED_ANNOTATION) or "", reason)]
    return []


def validate_preserve_unknown_fields(crd: Object, old: Object | None) -> ErrorList:
    """spec.preserveUnknownFields may stay true on old CRDs, but never become true."""
    if old is not None and (old.get("spec") or {}).get("preserveUnknownFields"):
        return []
    if (crd.get("spec") or {}).get("preserveUnknownFields"):
        return [
            field.invalid(
                Path("spec").child("preserveUnknownFields"),
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                "spec.versions[*].schema instead",
            )
        ]
    return []
