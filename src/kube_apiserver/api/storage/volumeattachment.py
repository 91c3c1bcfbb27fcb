"""volumeattachments and volumeattachments/status (pkg/registry/storage/volumeattachment).

The spec is immutable; status is written only through /status, which also keeps the stored labels,
annotations, finalizers and owner references (metav1.ResetObjectMetaForStatus)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import OrderedStruct
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status_reset_meta
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, blen, semantic_equal, validate_csi_driver_name, validate_dns_subdomain_name

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "volumeattachments", "VolumeAttachment", "volumeattachment", False)
MAX_METADATA_SIZE = 256 * (1 << 10)
MAX_ERROR_MESSAGE_SIZE = 1024
MAX_INT32 = 2**31 - 1
EXACTLY_ONE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"


def normalize(obj: Object) -> None:
    """Fields a real server always prints (no omitempty): spec.attacher, spec.source, spec.nodeName."""
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    spec.setdefault("attacher", "")
    if not isinstance(spec.get("source"), dict):
        spec["source"] = {}
    spec.setdefault("nodeName", "")
    obj["spec"] = spec


def zero_status(obj: Object) -> None:
    status = obj.get("status")
    status = status if isinstance(status, dict) else {}
    status.setdefault("attached", False)
    obj["status"] = status


def validate_spec(spec: Object, path: field.Path) -> field.ErrorList:
    errs = [] if spec.get("attacher") else [field.required(path.child("attacher"), "")]
    errs += validate_source(spec.get("source") or {}, path.child("source"))
    return errs + validate_dns_subdomain_name(spec.get("nodeName") or "", path.child("nodeName"))


def validate_source(source: Object, path: field.Path) -> field.ErrorList:
    """validateVolumeAttachmentSource (an inline volume spec is accepted without PersistentVolume checks)."""
    pv_name, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
    if pv_name is None and inline is None:
        return [field.required(path, EXACTLY_ONE)]
    if pv_name is not None and inline is not None:
        return [field.forbidden(path, EXACTLY_ONE)]
    if pv_name == "":
        return [field.required(path.child("persistentVolumeName"), "must specify non empty persistentVolumeName")]
    return []


def validate_status(status: Object, path: field.Path) -> field.ErrorList:
    metadata = status.get("attachmentMetadata") or {}
    errs: field.ErrorList = []
    if sum(blen(k) + blen(v or "") for k, v in metadata.items()) > MAX_METADATA_SIZE:
        errs.append(field.too_long(path.child("attachmentMetadata"), "", MAX_METADATA_SIZE))
    for key in ("attachError", "detachError"):
        errs += validate_volume_error(status.get(key), path.child(key))
    return errs


def validate_volume_error(error: Object | None, path: field.Path) -> field.ErrorList:
    if not error:
        return []
    errs: field.ErrorList = []
    if blen(error.get("message") or "") > MAX_ERROR_MESSAGE_SIZE:
        # Kubernetes reports the attachment-metadata limit here.
        errs.append(field.too_long(path.child("message"), "", MAX_METADATA_SIZE))
    code = error.get("errorCode")
    if code is not None and code < 0:
        errs.append(field.invalid(path.child("errorCode"), code, validation.inclusive_range_error(0, MAX_INT32)))
    return errs


def validate_v1(spec: Object) -> field.ErrorList:
    """ValidateVolumeAttachmentV1: the attacher is a CSI driver name, the PV name a DNS subdomain."""
    errs = validate_csi_driver_name(spec.get("attacher") or "", field.Path("spec.attacher"))
    pv_name = (spec.get("source") or {}).get("persistentVolumeName")
    if pv_name is not None:
        errs += validate_dns_subdomain_name(pv_name, field.Path("spec.source.persistentVolumeName"))
    return errs


def spec_struct(spec: Object) -> OrderedStruct:
    """The internal storage.VolumeAttachmentSpec as json.Marshal renders it (Go field names)."""
    source = spec.get("source") or {}
    return OrderedStruct((("Attacher", spec.get("attacher") or ""), ("Source", OrderedStruct((
        ("PersistentVolumeName", source.get("persistentVolumeName")),
        ("InlineVolumeSpec", source.get("inlineVolumeSpec"))))), ("NodeName", spec.get("nodeName") or "")))


class VolumeAttachmentStrategy(Strategy):
    allow_unconditional_update = False
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        normalize(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        zero_status(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        spec = obj.get("spec") or {}
        errs = super().validate(ctx, obj) + validate_spec(spec, field.Path("spec"))
        errs += validate_status(obj.get("status") or {}, field.Path("status"))
        return errs + validate_v1(spec)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        errs = super().validate_update(ctx, obj, old)
        if not semantic_equal(obj.get("spec"), old.get("spec")):
            errs.append(field.invalid(field.Path("spec"), spec_struct(obj.get("spec") or {}),
                                      validation.FIELD_IMMUTABLE_ERROR_MSG))
        return errs


def _keep_status(new: Object, old: Object) -> Object:
    """The status strategy's PrepareForUpdate: spec and the listed metadata from the stored object."""
    merged = keep_status_reset_meta(new, old)
    _drop_new_error_codes(merged.get("status") or {}, old.get("status") or {})
    return merged


def _drop_new_error_codes(status: Object, old_status: Object) -> None:
    """MutableCSINodeAllocatableCount is off in v1.34: a status update may not add an errorCode."""
    for key in ("attachError", "detachError"):
        error, old_error = status.get(key), old_status.get(key)
        if isinstance(error, dict) and (not isinstance(old_error, dict) or old_error.get("errorCode") is None):
            error.pop("errorCode", None)


class VolumeAttachmentStatusStrategy(SubresourceStrategy):
    def __init__(self, parent: Strategy):
        super().__init__(parent, _keep_status)
        self.allow_unconditional_update = parent.allow_unconditional_update
        self.reset_fields = (("metadata",), ("spec",))

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        zero_status(obj)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=VolumeAttachmentStatusStrategy(store.strategy))


def _row(obj: Object) -> list[Any]:
    spec = obj.get("spec") or {}
    pv_name = (spec.get("source") or {}).get("persistentVolumeName") or ""
    return [name(obj), spec.get("attacher", ""), pv_name, spec.get("nodeName", ""),
            bool((obj.get("status") or {}).get("attached")), age(obj)]


TABLE = TableConvertor((
    NAME,
    TableColumn("Attacher", "string", "name", "attacher indicates the name of the volume driver that MUST handle this "
                                              "request. This is the name returned by GetPluginName()."),
    TableColumn("PV", "string", "", "persistentVolumeName represents the name of the persistent volume to attach."),
    TableColumn("Node", "string", "", "nodeName represents the node that the volume should be attached to."),
    TableColumn("Attached", "boolean", "", "attached indicates the volume is successfully attached. This field must "
                                           "only be set by the entity completing the attach operation, i.e. the "
                                           "external-attacher."),
    AGE,
), _row)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, VolumeAttachmentStrategy(INFO), storage, "/registry/volumeattachments", TABLE)
    return {"volumeattachments": store, "volumeattachments/status": status_rest(store)}
