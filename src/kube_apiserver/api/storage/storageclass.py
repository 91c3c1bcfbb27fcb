"""storageclasses (pkg/apis/storage, pkg/registry/storage/storageclass)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, drop_empty, parameters_changed, validate_parameters, validate_provisioner

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "storageclasses", "StorageClass", "storageclass", False, short_names=("sc",))
RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def is_default_class(obj: Object) -> bool:
    """storageutil.IsDefaultAnnotation."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


def validate_allowed_topologies(terms: list[Any] | None, path: field.Path) -> field.ErrorList:
    """validateAllowedTopologies: each term valid, no two terms alike (empty terms count as alike)."""
    if not terms:
        return []
    errs: field.ErrorList = []
    seen: list[dict[str, frozenset[str]]] = [{} for _ in terms]  # Go pre-sizes the slice with nil maps
    for i, term in enumerate(terms):
        expressions, term_errs = validate_topology_term(term or {}, path.index(i))
        errs += term_errs
        errs += [field.duplicate(path.index(i).child("matchLabelExpressions"), "")
                 for other in seen if other == expressions]
        seen.append(expressions)
    return errs


def validate_topology_term(term: Object, path: field.Path) -> tuple[dict[str, frozenset[str]], field.ErrorList]:
    """apivalidation.ValidateTopologySelectorTerm."""
    errs: field.ErrorList = []
    expressions: dict[str, frozenset[str]] = {}
    for i, req in enumerate(term.get("matchLabelExpressions") or []):
        req_path = path.child("matchLabelExpressions").index(i)
        values, req_errs = _validate_topology_requirement(req or {}, req_path)
        errs += req_errs
        key = (req or {}).get("key") or ""
        if key in expressions:
            errs.append(field.duplicate(req_path.child("key"), key))
        expressions[key] = values
    return expressions, errs


def _validate_topology_requirement(req: Object, path: field.Path) -> tuple[frozenset[str], field.ErrorList]:
    values = req.get("values") or []
    errs: field.ErrorList = [] if values else [field.required(path.child("values"), "")]
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value in seen:
            errs.append(field.duplicate(path.child("values").index(i), value))
        seen.add(value)
    errs += validation.validate_label_name(req.get("key") or "", path.child("key"))
    return frozenset(seen), errs


class StorageClassStrategy(Strategy):
    def default(self, obj: Object) -> None:
        """SetDefaults_StorageClass."""
        obj.setdefault("provisioner", "")
        drop_empty(obj, "parameters", "mountOptions", "allowedTopologies")
        if obj.get("reclaimPolicy") is None:
            obj["reclaimPolicy"] = "Delete"
        if obj.get("volumeBindingMode") is None:
            obj["volumeBindingMode"] = "Immediate"

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        errs += validate_provisioner(obj.get("provisioner") or "", field.Path("provisioner"))
        errs += validate_parameters(obj.get("parameters"), True, field.Path("parameters"))
        policy = obj.get("reclaimPolicy") or ""
        if policy and policy not in RECLAIM_POLICIES:
            errs.append(field.not_supported(field.Path("reclaimPolicy"), policy, RECLAIM_POLICIES))
        mode = obj.get("volumeBindingMode")
        if mode is None:
            errs.append(field.required(field.Path("volumeBindingMode"), ""))
        elif mode not in BINDING_MODES:
            errs.append(field.not_supported(field.Path("volumeBindingMode"), mode, BINDING_MODES))
        return errs + validate_allowed_topologies(obj.get("allowedTopologies"), field.Path("allowedTopologies"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateStorageClassUpdate."""
        errs = super().validate_update(ctx, obj, old)
        if parameters_changed(obj.get("parameters"), old.get("parameters")):
            errs.append(field.forbidden(field.Path("parameters"), "updates to parameters are forbidden."))
        if obj.get("provisioner") != old.get("provisioner"):
            errs.append(field.forbidden(field.Path("provisioner"), "updates to provisioner are forbidden."))
        if obj.get("reclaimPolicy") != old.get("reclaimPolicy"):
            errs.append(field.forbidden(field.Path("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
        return errs + validation.validate_immutable_field(obj.get("volumeBindingMode"), old.get("volumeBindingMode"),
                                                          field.Path("volumeBindingMode"))


def _row(obj: Object) -> list[Any]:
    display = name(obj) + (" (default)" if is_default_class(obj) else "")
    return [display, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate", bool(obj.get("allowVolumeExpansion")), age(obj)]


TABLE = TableConvertor((
    NAME,
    TableColumn("Provisioner", "string", "", "provisioner indicates the type of the provisioner."),
    TableColumn("ReclaimPolicy", "string", "", "reclaimPolicy controls the reclaimPolicy for dynamically "
                                               "provisioned PersistentVolumes of this storage class. Defaults to "
                                               "Delete."),
    TableColumn("VolumeBindingMode", "string", "", "volumeBindingMode indicates how PersistentVolumeClaims should be "
                                                   "provisioned and bound.  When unset, VolumeBindingImmediate is "
                                                   "used. This field is only honored by servers that enable the "
                                                   "VolumeScheduling feature."),
    TableColumn("AllowVolumeExpansion", "string", "", "allowVolumeExpansion shows whether the storage class allow "
                                                      "volume expand."),
    AGE,
), _row)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"storageclasses": Store(INFO, StorageClassStrategy(INFO), storage, "/registry/storageclasses", TABLE)}
