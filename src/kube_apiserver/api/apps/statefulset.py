"""statefulsets, statefulsets/status and statefulsets/scale (pkg/registry/apps/statefulset). No Pods
or PersistentVolumeClaims are created for them here: that is kube-controller-manager's statefulset
controller."""

from __future__ import annotations

from typing import Any

from ...apimachinery import validation
from ...apimachinery.field import ErrorList, Path
from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...registry.subresource import keep_status
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .defaults import default_stateful_set
from .printing import CONTAINERS, IMAGES, READY, container_cells, count, spec_of, status_of
from .scale import ScaleREST
from .statefulset_validation import validate_spec, validate_status_update, validate_update
from .workload import WorkloadStrategy, status_rest

Object = dict[str, Any]
INFO = ResourceInfo("apps", "v1", "statefulsets", "StatefulSet", "statefulset", True, short_names=("sts",),
                    categories=("all",))


class StatefulSetStrategy(WorkloadStrategy):
    status_zeros = ("replicas", "availableReplicas")
    name_validator = staticmethod(validation.name_is_dns_label)
    warn_on_name = False  # the name is a DNS label already

    def set_defaults(self, obj: Object) -> None:
        default_stateful_set(obj)

    def validate_create(self, obj: Object) -> ErrorList:
        errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_label,
                                               Path("metadata"))
        return errs + validate_spec(spec_of(obj), Path("spec"))

    def validate_change(self, obj: Object, old: Object) -> ErrorList:
        return validate_update(obj, old)


TABLE = TableConvertor((NAME, READY, AGE, CONTAINERS, IMAGES), lambda o: [
    name(o), f"{count(status_of(o), 'readyReplicas')}/{count(spec_of(o), 'replicas')}", age(o), *container_cells(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, StatefulSetStrategy(INFO), storage, "/registry/statefulsets", TABLE)
    return {"statefulsets": store, "statefulsets/status": status_rest(store, keep_status, validate_status_update),
            "statefulsets/scale": ScaleREST(store)}
