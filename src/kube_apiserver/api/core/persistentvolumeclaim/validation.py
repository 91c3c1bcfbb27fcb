"""PersistentVolumeClaim validation (ValidatePersistentVolumeClaim, ValidatePersistentVolumeClaimUpdate,
ValidatePersistentVolumeClaimStatusUpdate): the spec is immutable but for a bound claim's storage request
and its volumeAttributesClassName; volumeName is set once."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, quantity, validation
from ....apimachinery.field import ErrorList
from ....apimachinery.meta import spec_of, status_of
from ...node.resources import validate_quantity_value
from ..persistentvolume.helpers import BETA_CLASS_ANNOTATION
from ..persistentvolume.validation import validate_basic_resource
from ..pod.specdiff import spec_diff
from .spec import validate_claim_spec

Object = dict[str, Any]
IMMUTABLE_SPEC = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound " \
                 "claims"
RESIZE_STATUSES = ("ControllerResizeFailed", "ControllerResizeInProgress", "NodeResizeFailed",
                   "NodeResizeInProgress", "NodeResizePending")
STORAGE = field.Path("spec", "resources", "requests", "storage")


def validate_claim(obj: Object, allow_invalid_group: bool = False) -> ErrorList:
    """ValidatePersistentVolumeClaim, without ValidateObjectMeta."""
    return validate_claim_spec(spec_of(obj), field.Path("spec"), allow_invalid_group)


def _annotation(obj: Object) -> str | None:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(BETA_CLASS_ANNOTATION)


def _class_change_allowed(obj: Object, old: Object) -> tuple[bool, ErrorList]:
    """validateStorageClassUpgradeFromAnnotation, else the immutable annotation and
    validateStorageClassUpgradeFromNil: whether storageClassName may be set now."""
    old_annotation, new_annotation = _annotation(old), _annotation(obj)
    old_name, new_name = spec_of(old).get("storageClassName"), spec_of(obj).get("storageClassName")
    if old_annotation is not None and old_name is None and new_name == old_annotation and \
            new_annotation in (None, old_annotation):
        return True, []
    errs: ErrorList = []
    if (new_annotation or "") != (old_annotation or ""):
        errs.append(field.invalid(field.Path("metadata", "annotations", BETA_CLASS_ANNOTATION), new_annotation or "",
                                  validation.FIELD_IMMUTABLE_ERROR_MSG))
    from_nil = new_name is not None and old_name is None and old_annotation in (None, new_name)
    return from_nil, errs


def _size(obj_part: Object, key: str) -> quantity.Quantity:
    try:
        return quantity.parse((obj_part.get(key) or {}).get("storage") or "0")
    except quantity.QuantityError:
        return quantity.parse("0")


def _shrink(obj: Object, old: Object) -> ErrorList:
    """Requests below the previous value down to (not at) the recorded capacity (recovery from a failed
    expansion; RecoverVolumeExpansionFailure is on in v1.34)."""
    new, previous = _size(spec_of(obj).get("resources") or {}, "requests"), \
        _size(spec_of(old).get("resources") or {}, "requests")
    if new.value < previous.value and new.value <= _size(status_of(old), "capacity").value:
        return [field.forbidden(STORAGE, "field can not be less than status.capacity")]
    return []


def _set(target: Object, key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def semantic(value: Any) -> Any:
    """For comparing as apiequality.Semantic does: no difference between unset, nil and empty lists or maps."""
    if isinstance(value, dict):
        cleaned = {k: semantic(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value


def comparable_specs(obj: Object, old: Object, class_may_change: bool) -> tuple[Object, Object]:
    """Both specs with what an update may change made equal: a first volumeName, a storageClassName set
    from nil, a bound claim's storage request, volumeAttributesClassName."""
    spec, old_spec = semantic(spec_of(obj)), semantic(spec_of(old))  # fresh copies
    if not old_spec.get("volumeName"):
        _set(old_spec, "volumeName", spec.get("volumeName"))
    if class_may_change:
        _set(spec, "storageClassName", old_spec.get("storageClassName"))
    requests = (spec.get("resources") or {}).get("requests")
    if status_of(obj).get("phase") == "Bound" and isinstance(requests, dict):
        _set(requests, "storage", ((old_spec.get("resources") or {}).get("requests") or {}).get("storage"))
    _set(spec, "volumeAttributesClassName", old_spec.get("volumeAttributesClassName"))
    return semantic(spec), semantic(old_spec)


def validate_claim_update(obj: Object, old: Object) -> ErrorList:
    """ValidatePersistentVolumeClaimUpdate, without ValidateObjectMetaUpdate."""
    class_may_change, errs = _class_change_allowed(obj, old)
    spec, old_spec = comparable_specs(obj, old, class_may_change)
    if spec != old_spec:
        diff = spec_diff(old_spec, spec, "core.PersistentVolumeClaimSpec")
        errs.append(field.forbidden(field.Path("spec"), f"{IMMUTABLE_SPEC}\n{diff}"))
    errs += _shrink(obj, old)
    errs += validation.validate_immutable_field(spec_of(obj).get("volumeMode"), spec_of(old).get("volumeMode"),
                                                field.Path("volumeMode"))
    return errs + _attributes_class_update(obj, old)


def _attributes_class_update(obj: Object, old: Object) -> ErrorList:
    old_name, new_name = spec_of(old).get("volumeAttributesClassName"), spec_of(obj).get("volumeAttributesClassName")
    path = field.Path("spec", "volumeAttributesClassName")
    if old_name is None or old_name == new_name:
        return []
    if new_name is None:
        return [field.forbidden(path, "update from non-nil value to nil is forbidden")]
    if not new_name:
        return [field.forbidden(path, "update from non-nil value to an empty string is forbidden")]
    return []


def _resource_key(key: str, path: field.Path) -> ErrorList:
    """validatePersistentVolumeClaimResourceKey: a qualified name; of the native ones, only storage."""
    errs = [field.invalid(path, key, m) for m in validation.is_qualified_name(key)]
    if not errs and ("/" not in key or "kubernetes.io/" in key) and key != "storage":
        errs.append(field.not_supported(path, key, ["storage"]))
    return errs


def validate_claim_status_update(obj: Object) -> ErrorList:
    """ValidatePersistentVolumeClaimStatusUpdate, without ValidateObjectMetaUpdate."""
    errs: ErrorList = []
    if not spec_of(obj).get("accessModes"):
        errs.append(field.required(field.Path("Spec", "accessModes"), ""))
    status = status_of(obj)
    for name, raw in sorted((status.get("capacity") or {}).items()):
        errs += validate_basic_resource(raw, field.Path("status", "capacity").key(name))
    statuses_path = field.Path("status", "allocatedResourceStatus")
    for key, value in sorted((status.get("allocatedResourceStatuses") or {}).items()):
        errs += _resource_key(key, statuses_path)
        if value not in RESIZE_STATUSES:
            errs.append(field.not_supported(statuses_path, key, RESIZE_STATUSES))
    alloc_path = field.Path("status", "allocatedResources")
    for name, raw in sorted((status.get("allocatedResources") or {}).items()):
        key_errs = _resource_key(name, alloc_path)
        if key_errs:
            errs += key_errs
            continue
        basic = validate_basic_resource(raw, alloc_path.key(name))
        errs += basic or validate_quantity_value("storage", quantity.parse(raw), alloc_path.key(name))
    return errs
