"""csinodes (pkg/apis/storage, pkg/registry/storage/csinode): the CSI drivers registered on a node.

A driver entry, once present, never changes (MutableCSINodeAllocatableCount is off in v1.34)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import OrderedStruct
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, blen, semantic_equal, validate_csi_driver_name, validate_qualified_name

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "csinodes", "CSINode", "csinode", False)
NODE_ID_MAX_LENGTH = 256  # the strategy allows long node IDs
DRIVERS_PATH = field.Path("spec", "drivers")


def normalize(obj: Object) -> None:
    """spec.drivers and each driver's name, nodeID and topologyKeys are printed even when unset (null)."""
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    spec.setdefault("drivers", None)
    for driver in spec["drivers"] or []:
        if isinstance(driver, dict):
            driver.setdefault("name", "")
            driver.setdefault("nodeID", "")
            driver.setdefault("topologyKeys", None)
    obj["spec"] = spec


def validate_drivers(drivers: list[Object], path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    names: set[str] = set()
    for i, driver in enumerate(drivers):
        errs += validate_driver(driver, names, path.index(i))
    return errs


def validate_driver(driver: Object, names: set[str], path: field.Path) -> field.ErrorList:
    """validateCSINodeDriver."""
    driver_name = driver.get("name") or ""
    errs = validate_csi_driver_name(driver_name, path.child("name"))
    errs += validate_node_id(driver.get("nodeID") or "", path.child("nodeID"))
    count = (driver.get("allocatable") or {}).get("count")
    if count is not None:
        errs += validation.validate_nonnegative_field(count, path.child("allocatable", "count"))
    if driver_name in names:
        errs.append(field.duplicate(path.child("name"), driver_name))
    names.add(driver_name)
    keys: set[str] = set()
    for key in driver.get("topologyKeys") or []:
        if not key:
            errs.append(field.required(path, ""))
        if key in keys:
            errs.append(field.duplicate(path, key))
        keys.add(key)
        errs += validate_qualified_name(key, path)
    return errs


def validate_node_id(node_id: str, path: field.Path) -> field.ErrorList:
    errs = [] if node_id else [field.required(path, "")]
    if blen(node_id) > NODE_ID_MAX_LENGTH:
        errs.append(field.invalid(path, node_id, f"must be {NODE_ID_MAX_LENGTH} characters or less"))
    return errs


def driver_struct(driver: Object) -> OrderedStruct:
    """The internal storage.CSINodeDriver as json.Marshal renders it (Go field names)."""
    allocatable = driver.get("allocatable")
    resources = None if allocatable is None else OrderedStruct((("Count", allocatable.get("count")),))
    return OrderedStruct((("Name", driver.get("name") or ""), ("NodeID", driver.get("nodeID") or ""),
                          ("TopologyKeys", driver.get("topologyKeys")), ("Allocatable", resources)))


class CSINodeStrategy(Strategy):
    allow_unconditional_update = False

    def default(self, obj: Object) -> None:
        normalize(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        drivers = (obj.get("spec") or {}).get("drivers") or []
        return super().validate(ctx, obj) + validate_drivers(drivers, DRIVERS_PATH)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateCSINodeUpdate: an entry for a driver already registered may not change."""
        errs = super().validate_update(ctx, obj, old)
        drivers = (obj.get("spec") or {}).get("drivers") or []
        for old_driver in (old.get("spec") or {}).get("drivers") or []:
            for driver in drivers:
                if driver.get("name") == old_driver.get("name") and not semantic_equal(driver, old_driver):
                    errs.append(field.invalid(DRIVERS_PATH, driver_struct(driver),
                                              validation.FIELD_IMMUTABLE_ERROR_MSG))
        return errs


TABLE = TableConvertor((
    NAME,
    TableColumn("Drivers", "integer", "", "Drivers indicates the number of CSI drivers registered on the node"),
    AGE,
), lambda o: [name(o), len((o.get("spec") or {}).get("drivers") or []), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"csinodes": Store(INFO, CSINodeStrategy(INFO), storage, "/registry/csinodes", TABLE)}
