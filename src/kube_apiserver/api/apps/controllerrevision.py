"""controllerrevisions (pkg/registry/apps/controllerrevision): immutable snapshots of a workload's
state, written by the workload controllers."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import ErrorList, Path
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .defaults import default
from .workload import meta_update, updating

Object = dict[str, Any]
INFO = ResourceInfo("apps", "v1", "controllerrevisions", "ControllerRevision", "controllerrevision", True)


def validate_revision(obj: Object) -> ErrorList:
    """ValidateControllerRevision."""
    errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           Path("metadata"))
    if obj.get("data") is None:
        errs.append(field.required(Path("data"), "data is mandatory"))
    revision = obj.get("revision")
    return errs + validation.validate_nonnegative_field(revision if isinstance(revision, int) else 0,
                                                        Path("revision"))


class ControllerRevisionStrategy(Strategy):
    def default(self, obj: Object) -> None:
        default(obj, "revision", 0)  # json:"revision" has no omitempty

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return [] if updating(obj) else validate_revision(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        """ValidateControllerRevisionUpdate: data never changes."""
        errs = meta_update(obj, old) + validate_revision(obj)
        return errs + validation.validate_immutable_field(obj.get("data"), old.get("data"), Path("data"))


def controller(obj: Object) -> str:
    """The controller owner as printControllerRevision names it: kind.group/name."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = ref.get("kind", "")
            qualified = f"{kind}.{group}" if group else kind
            return f"{qualified.lower()}/{ref.get('name', '')}" if kind or group else ref.get("name", "")
    return "<none>"


TABLE = TableConvertor((
    NAME,
    TableColumn("Controller", "string", "", "Controller of the object"),
    TableColumn("Revision", "string", "", "Revision indicates the revision of the state represented by Data."),
    AGE,
), lambda o: [name(o), controller(o), o.get("revision", 0), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, ControllerRevisionStrategy(INFO), storage, "/registry/controllerrevisions", TABLE)
    return {"controllerrevisions": store}
