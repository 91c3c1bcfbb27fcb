"""A PersistentVolumeClaimSpec (ValidatePersistentVolumeClaimSpec and the data source checks), shared by
claims and the claim templates of ephemeral volumes."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, quantity, validation
from ....apimachinery.field import ErrorList, Path
from ...node.resources import validate_quantity_value
from ..persistentvolume.helpers import validate_access_modes, validate_class_name, validate_volume_mode
from ..persistentvolume.validation import validate_positive_quantity

Object = dict[str, Any]
# Kubernetes reports a *field.Path as the bad value here; it marshals to {}.
PATH_VALUE: Object = {}
DEFAULT_GROUP_KIND = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"


def _data_source(ref: Object, path: Path, allow_invalid_group: bool) -> ErrorList:
    """validateDataSource / validateDataSourceRef."""
    errs: ErrorList = []
    if not ref.get("name"):
        errs.append(field.required(path.child("name"), ""))
    if not ref.get("kind"):
        errs.append(field.required(path.child("kind"), ""))
    group = ref.get("apiGroup") or ""
    if not group and ref.get("kind") != "PersistentVolumeClaim":
        errs.append(field.invalid(path, ref.get("kind") or "", DEFAULT_GROUP_KIND))
    if group and not allow_invalid_group:
        errs += [field.invalid(path.child("apiGroup"), group, m) for m in validation.is_dns1123_subdomain(group)]
    namespace = ref.get("namespace") or ""
    if namespace:
        errs += [field.invalid(path.child("namespace"), namespace, m)
                 for m in validation.name_is_dns_label(namespace, False)]
    return errs


def same_source(source: Object, ref: Object) -> bool:
    return all(source.get(k) == ref.get(k) for k in ("apiGroup", "kind", "name"))


def _data_sources(spec: Object, path: Path, allow_invalid_group: bool) -> ErrorList:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    errs: ErrorList = []
    if isinstance(source, dict):
        errs += _data_source(source, path.child("dataSource"), allow_invalid_group)
    if isinstance(ref, dict):
        errs += _data_source(ref, path.child("dataSourceRef"), allow_invalid_group)
    if isinstance(ref, dict) and ref.get("namespace"):
        if source is not None:
            errs.append(field.invalid(path, PATH_VALUE,
                                      "may not be specified when dataSourceRef.namespace is specified"))
    elif isinstance(source, dict) and isinstance(ref, dict) and not same_source(source, ref):
        errs.append(field.invalid(path, PATH_VALUE, "must match dataSourceRef"))
    return errs


def _storage_request(spec: Object, path: Path) -> ErrorList:
    requests = (spec.get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        return [field.required(path, "")]
    errs = validate_positive_quantity(requests["storage"], path)
    if errs:
        return errs
    try:
        return validate_quantity_value("storage", quantity.parse(requests["storage"]), path)
    except quantity.QuantityError:
        return []


def validate_claim_spec(spec: Object, path: Path, allow_invalid_group: bool = False) -> ErrorList:
    """ValidatePersistentVolumeClaimSpec."""
    modes = spec.get("accessModes") or []
    errs: ErrorList = [] if modes else [field.required(path.child("accessModes"), "at least 1 access mode is "
                                                                                  "required")]
    if isinstance(spec.get("selector"), dict):
        errs += validation.validate_label_selector(spec["selector"], path.child("selector"))
    errs += validate_access_modes(modes, path.child("accessModes"))
    errs += _storage_request(spec, path.child("resources").key("storage"))
    if spec.get("storageClassName"):
        errs += validate_class_name(spec["storageClassName"], path.child("storageClassName"))
    errs += validate_volume_mode(spec.get("volumeMode"), path.child("volumeMode"))
    errs += _data_sources(spec, path, allow_invalid_group)
    if spec.get("volumeAttributesClassName"):
        errs += validate_class_name(spec["volumeAttributesClassName"], path.child("volumeAttributesClassName"))
    return errs
