"""The AdmissionReview sent to a webhook and the checks its answer must pass
(k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go)."""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass, field
from typing import Any

from .rules import GVK

Object = dict[str, Any]
GROUP = "admission.k8s.io"
VERSIONS = ("v1", "v1beta1")


class InvalidResponse(Exception):
    """The answer is not an acceptable AdmissionReview; str() is Kubernetes' wording."""


def review_version(versions: list[Any]) -> str | None:
    """CreateAdmissionObjects: the first AdmissionReview version the webhook accepts that we speak."""
    return next((v for v in versions if v in VERSIONS), None)


def new_uid() -> str:
    return str(uuid.uuid4())


def with_type(obj: Object | None, kind: GVK) -> Object | None:
    """The object as a typed encoder writes it: apiVersion and kind first."""
    if obj is None:
        return None
    return {"apiVersion": obj.get("apiVersion") or kind.api_version, "kind": obj.get("kind") or kind.kind,
            **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}}


def admission_review(version: str, request: Object) -> Object:
    return {"kind": "AdmissionReview", "apiVersion": f"{GROUP}/{version}", "request": request}


@dataclass
class Response:
    allowed: bool
    patch: bytes = b""
    patch_type: str = ""
    result: Object | None = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)


def _gvk_string(review: Object) -> str:
    """schema.GroupVersionKind.String() of what the webhook said it sent."""
    group, _, version = str(review.get("apiVersion") or "").rpartition("/")
    return f"{group}/{version}, Kind={review.get('kind') or ''}"


def _patch_bytes(answer: Object) -> bytes:
    patch = answer.get("patch")
    if not patch:
        return b""
    try:
        return base64.b64decode(patch, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise InvalidResponse("illegal base64 data in response.patch") from None


def _patch_fields(answer: Object, mutating: bool) -> tuple[bytes, str]:
    patch, patch_type = _patch_bytes(answer), answer.get("patchType")
    if not mutating:
        if patch:
            raise InvalidResponse("validating webhook may not return response.patch")
        if patch_type is not None:
            raise InvalidResponse("validating webhook may not return response.patchType")
        return b"", ""
    if patch and patch_type is None:
        raise InvalidResponse("webhook returned response.patch but not response.patchType")
    if not patch and patch_type is not None:
        raise InvalidResponse("webhook returned response.patchType but not response.patch")
    if patch_type == "":
        raise InvalidResponse('webhook returned invalid response.patchType of ""')
    return patch, patch_type or ""


def verify_response(uid: str, version: str, mutating: bool, review: Any) -> Response:
    """VerifyAdmissionResponse."""
    review = review if isinstance(review, dict) else {}
    answer = review.get("response")
    if not isinstance(answer, dict):
        raise InvalidResponse("webhook response was absent")
    if version == "v1beta1":  # no uid check, and a patch is always a JSON patch
        patch = _patch_bytes(answer) if mutating else b""
        return Response(answer.get("allowed") is True, patch, "JSONPatch" if patch else "",
                        _dict(answer.get("status")), _strings(answer.get("warnings")),
                        _dict(answer.get("auditAnnotations")) or {})
    if answer.get("uid") != uid:
        raise InvalidResponse(f'expected response.uid="{uid}", got "{answer.get("uid") or ""}"')
    if review.get("apiVersion") != f"{GROUP}/v1" or review.get("kind") != "AdmissionReview":
        raise InvalidResponse(f"expected webhook response of {GROUP}/v1, Kind=AdmissionReview, "
                              f"got {_gvk_string(review)}")
    patch, patch_type = _patch_fields(answer, mutating)
    return Response(answer.get("allowed") is True, patch, patch_type, _dict(answer.get("status")),
                    _strings(answer.get("warnings")), _dict(answer.get("auditAnnotations")) or {})


def _dict(value: Any) -> Object | None:
    return value if isinstance(value, dict) else None


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []
