"""volumeattributesclasses (pkg/apis/storage, pkg/registry/storage/volumeattributesclass): driver name and
parameters, both immutable."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, drop_empty, parameters_changed, validate_parameters, validate_provisioner

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "volumeattributesclasses", "VolumeAttributesClass", "volumeattributesclass", False,
                    short_names=("vac",))


class VolumeAttributesClassStrategy(Strategy):
    def default(self, obj: Object) -> None:
        obj.setdefault("driverName", "")
        drop_empty(obj, "parameters")

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        """ValidateVolumeAttributesClass."""
        errs = super().validate(ctx, obj)
        errs += validate_provisioner(obj.get("driverName") or "", field.Path("driverName"))
        return errs + validate_parameters(obj.get("parameters"), False, field.Path("parameters"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        errs = super().validate_update(ctx, obj, old)
        if obj.get("driverName") != old.get("driverName"):
            errs.append(field.forbidden(field.Path("driverName"), "updates to driverName are forbidden."))
        if parameters_changed(obj.get("parameters"), old.get("parameters")):
            errs.append(field.forbidden(field.Path("parameters"), "updates to parameters are forbidden."))
        return errs


TABLE = TableConvertor((
    NAME,
    TableColumn("DriverName", "string", "", "Name of the CSI driver This field is immutable."),
    AGE,
), lambda o: [name(o), o.get("driverName", ""), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, VolumeAttributesClassStrategy(INFO), storage, "/registry/volumeattributesclasses", TABLE)
    return {"volumeattributesclasses": store}
