"""ValidatePodCreate / validatePodMetadataAndSpec: the metadata, annotations and spec of a pod, and
what only a pod (not a template) must satisfy."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ..podspec import PodValidationOptions, validate_pod_spec
from ..podspec.annotations import validate_pod_annotations
from ..podspec.containers import validate_image_whitespace

Object = dict[str, Any]
SPEC = Path("spec")


def _projected_tokens(spec: Object) -> ErrorList:
    if spec.get("serviceAccountName"):
        return []
    errs: ErrorList = []
    for vi, volume in enumerate(spec.get("volumes") or []):
        projected = volume.get("projected") if isinstance(volume, dict) else None
        for si, source in enumerate((projected or {}).get("sources") or []):
            if isinstance(source, dict) and source.get("serviceAccountToken") is not None:
                errs.append(field.forbidden(SPEC.child("volumes").index(vi).child("projected", "sources").index(si)
                                            .child("serviceAccountToken"),
                                            "must not be specified when serviceAccountName is not set"))
    return errs


def validate_metadata_and_spec(pod: Object, opts: PodValidationOptions) -> ErrorList:
    """validatePodMetadataAndSpec."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    errs = validation.validate_object_meta(meta, True, validation.name_is_dns_subdomain, Path("metadata"))
    errs += validate_pod_annotations(meta.get("annotations"), spec, Path("metadata", "annotations"))
    errs += validate_pod_spec(spec, SPEC, opts, meta.get("name") or "") + _projected_tokens(spec)
    for key in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(key) or []):
            errs += validate_image_whitespace(container, SPEC.child(key).index(i))
    return errs


def validate_pod(pod: Object, opts: PodValidationOptions, creating: bool) -> ErrorList:
    """ValidatePodCreate (creating) or the metadata-and-spec half of ValidatePodUpdate."""
    errs = validate_metadata_and_spec(pod, opts)
    if not creating:
        return errs
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    if spec.get("ephemeralContainers"):
        errs.append(field.forbidden(SPEC.child("ephemeralContainers"), "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(field.forbidden(SPEC.child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
    return errs
