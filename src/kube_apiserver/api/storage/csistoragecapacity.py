"""csistoragecapacities (pkg/apis/storage, pkg/registry/storage/csistoragecapacity): namespaced capacity
reports of CSI drivers, per storage class and node topology."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, field, quantity, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import NAME, TableConvertor, name
from ...storage.factory import StorageFactory
from ..policy.poddisruptionbudget import selector_struct
from .common import GROUP, semantic_equal, validate_dns_subdomain_name

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "csistoragecapacities", "CSIStorageCapacity", "csistoragecapacity", True)
QUANTITIES = ("capacity", "maximumVolumeSize")


def canonicalize_quantities(obj: Object) -> None:
    """Quantities decode into their canonical form; a malformed one fails decoding (400)."""
    for key in QUANTITIES:
        if obj.get(key) is None:
            continue
        try:
            obj[key] = str(quantity.parse(obj[key]))
        except quantity.QuantityError as err:
            raise errors.bad_request(f'{INFO.kind} in version "v1" cannot be handled as a {INFO.kind}: {err}') \
                from None


class CSIStorageCapacityStrategy(Strategy):
    allow_unconditional_update = False

    def default(self, obj: Object) -> None:
        obj.setdefault("storageClassName", "")
        canonicalize_quantities(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        """ValidateCSIStorageCapacity."""
        errs = super().validate(ctx, obj)
        errs += validation.validate_label_selector(obj.get("nodeTopology"), field.Path("nodeTopology"))
        errs += validate_dns_subdomain_name(obj.get("storageClassName") or "", field.Path("storageClassName"))
        capacity = obj.get("capacity")
        if capacity is not None and quantity.parse(capacity).sign() < 0:
            errs.append(field.invalid(field.Path("capacity"), capacity, validation.IS_NEGATIVE_ERROR_MSG))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateCSIStorageCapacityUpdate: nodeTopology and storageClassName are immutable."""
        errs = super().validate_update(ctx, obj, old)
        if not semantic_equal(obj.get("nodeTopology"), old.get("nodeTopology")):
            errs.append(field.invalid(field.Path("nodeTopology"), selector_struct(obj.get("nodeTopology")),
                                      validation.FIELD_IMMUTABLE_ERROR_MSG))
        if obj.get("storageClassName") != old.get("storageClassName"):
            errs.append(field.invalid(field.Path("storageClassName"), obj.get("storageClassName") or "",
                                      validation.FIELD_IMMUTABLE_ERROR_MSG))
        return errs


TABLE = TableConvertor((
    NAME,
    TableColumn("StorageClassName", "string", "", (
        "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must "
        "meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object "
        "no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This "
        "field is immutable.")),
    TableColumn("Capacity", "string", "", (
        "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with "
        "topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) "
        "defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If "
        "not set, that information is currently unavailable.")),
), lambda o: [name(o), o.get("storageClassName", ""), str(o["capacity"]) if o.get("capacity") is not None
              else "<unset>"])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, CSIStorageCapacityStrategy(INFO), storage, "/registry/csistoragecapacities", TABLE)
    return {"csistoragecapacities": store}
