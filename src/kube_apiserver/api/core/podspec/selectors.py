"""Downward API selectors (fieldRef and resourceFieldRef), shared by env vars and volumes."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, quantity, validation
from ....apimachinery.field import ErrorList, Path

Object = dict[str, Any]
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
VOLUME_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations",
                      "metadata.uid")
# pkg/apis/core/pods ConvertDownwardAPIFieldLabel: the labels a v1 fieldRef may name.
CONVERTIBLE_LABELS = frozenset(("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                                "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
                                "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs",
                                "status.podIP", "status.podIPs"))
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                        "requests.ephemeral-storage", "requests.memory")
HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
BYTE_DIVISORS = frozenset(("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"))
BYTE_DIVISOR_LIST = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def split_subscript(path: str) -> tuple[str, str, bool]:
    """fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['key']` -> (`metadata.labels`, `key`)."""
    if not path.endswith("']"):
        return path, "", False
    head, sep, rest = path.partition("['")
    if not sep:
        return path, "", False
    return head, rest[:-2], True


def _convert(api_version: str, label: str) -> tuple[str, str | None]:
    """ConvertDownwardAPIFieldLabel: (the internal label, None) or ("", why it failed)."""
    if api_version != "v1":
        return "", f"unsupported pod version: {api_version}"
    head, _, subscripted = split_subscript(label)
    if subscripted:
        if head in ("metadata.annotations", "metadata.labels"):
            return label, None
        return "", f"field label does not support subscript: {label}"
    if label == "spec.host":
        return "spec.nodeName", None
    if label in CONVERTIBLE_LABELS:
        return label, None
    return "", f"field label not supported: {label}"


def validate_object_field_selector(ref: Object, expressions: tuple[str, ...], path: Path) -> ErrorList:
    """validateObjectFieldSelector."""
    if not ref.get("apiVersion"):
        return [field.required(path.child("apiVersion"), "")]
    field_path = ref.get("fieldPath") or ""
    if not field_path:
        return [field.required(path.child("fieldPath"), "")]
    internal, why = _convert(ref["apiVersion"], field_path)
    if why is not None:
        return [field.invalid(path.child("fieldPath"), field_path, f"error converting fieldPath: {why}")]
    head, subscript, subscripted = split_subscript(internal)
    if subscripted:
        if head == "metadata.annotations":
            return [field.invalid(path, subscript.lower(), m) for m in validation.is_qualified_name(subscript.lower())]
        if head == "metadata.labels":
            return [field.invalid(path, subscript, m) for m in validation.is_qualified_name(subscript)]
        return [field.invalid(path, head, "does not support subscript")]
    if head not in expressions:
        return [field.not_supported(path.child("fieldPath"), head, sorted(expressions))]
    return []


def _divisor_error(resource: str, divisor: str) -> str | None:
    if resource in ("limits.cpu", "requests.cpu"):
        return None if divisor in ("1m", "1") else "only divisor's values 1m and 1 are supported with the cpu resource"
    kinds = {"limits.memory": "memory", "requests.memory": "memory", "limits.ephemeral-storage":
             "local ephemeral storage", "requests.ephemeral-storage": "local ephemeral storage"}
    kind = kinds.get(resource) or ("hugepages" if resource.startswith(HUGEPAGES_PREFIXES) else None)
    if kind is None or divisor in BYTE_DIVISORS:
        return None
    return f"only divisor's values {BYTE_DIVISOR_LIST} are supported with the {kind} resource"


def validate_resource_field_selector(ref: Object, path: Path, volume: bool) -> ErrorList:
    """validateContainerResourceFieldSelector (with the hugepages prefixes)."""
    errs: ErrorList = []
    resource = ref.get("resource") or ""
    if volume and not ref.get("containerName"):
        errs.append(field.required(path.child("containerName"), ""))
    elif not resource:
        errs.append(field.required(path.child("resource"), ""))
    elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(HUGEPAGES_PREFIXES):
        errs.append(field.not_supported(path.child("resource"), resource, RESOURCE_FIELD_PATHS))
    raw = ref.get("divisor")
    try:
        divisor = quantity.parse(raw) if raw not in (None, "") else None
    except quantity.QuantityError:
        divisor = None
    if divisor is not None and divisor.sign() != 0:
        why = _divisor_error(resource, str(divisor))
        if why is not None:
            errs.append(field.invalid(path.child("divisor"), resource, why))
    return errs
