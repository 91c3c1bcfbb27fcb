"""Checks several storage.k8s.io kinds share (pkg/apis/storage/validation, pkg/apis/core/validation)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation

Object = dict[str, Any]
GROUP = "storage.k8s.io"
MAX_PARAMETER_SIZE = 256 * (1 << 10)
MAX_PARAMETER_COUNT = 512
CSI_DRIVER_NAME_MAX_LENGTH = 63


def blen(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def validate_qualified_name(value: str, path: field.Path) -> field.ErrorList:
    """apivalidation.ValidateQualifiedName."""
    return [field.invalid(path, value, msg) for msg in validation.is_qualified_name(value)]


def validate_provisioner(provisioner: str, path: field.Path) -> field.ErrorList:
    """validateProvisioner: required, a qualified name once lower-cased."""
    if not provisioner:
        return [field.required(path, "")]
    return validate_qualified_name(provisioner.lower(), path)


def validate_parameters(params: dict[str, str] | None, allow_empty: bool, path: field.Path) -> field.ErrorList:
    """validateParameters: at most 512 keys, 256 KiB in all, no empty key."""
    params = params or {}
    if len(params) > MAX_PARAMETER_COUNT:
        return [field.too_long(path, "", MAX_PARAMETER_COUNT)]
    errs = [field.invalid(path, key, "field can not be empty.") for key in params if not key]
    if sum(blen(k) + blen(v or "") for k, v in params.items()) > MAX_PARAMETER_SIZE:
        errs.append(field.too_long(path, "", MAX_PARAMETER_SIZE))
    if not allow_empty and not params:
        errs.append(field.required(path, "must contain at least one key/value pair"))
    return errs


def validate_csi_driver_name(name: str, path: field.Path) -> field.ErrorList:
    """apivalidation.ValidateCSIDriverName."""
    errs: field.ErrorList = []
    if not name:
        errs.append(field.required(path, ""))
    if blen(name) > CSI_DRIVER_NAME_MAX_LENGTH:
        errs.append(field.too_long(path, name, CSI_DRIVER_NAME_MAX_LENGTH))
    return errs + [field.invalid(path, name, msg) for msg in validation.is_dns1123_subdomain(name.lower())]


def validate_dns_subdomain_name(value: str, path: field.Path) -> field.ErrorList:
    """A name that must be a DNS subdomain (class, node and volume names), as field.Invalid errors."""
    return [field.invalid(path, value, msg) for msg in validation.name_is_dns_subdomain(value, False)]


def drop_empty(obj: Object, *keys: str) -> None:
    """omitempty: an empty map or list is not stored (a real server never prints it)."""
    for key in keys:
        if key in obj and obj[key] in ({}, [], None):
            del obj[key]


def parameters_changed(new: Any, old: Any) -> bool:
    """reflect.DeepEqual of parameter maps: the stored map is never empty (omitempty), so a request's
    empty map differs from it."""
    return bool(new != (old or None))


def semantic_equal(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual on decoded JSON: a missing, null or empty list or map is one value."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        return all(semantic_equal(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    if _empty(a) and _empty(b):
        return True
    return bool(a == b)


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {}
