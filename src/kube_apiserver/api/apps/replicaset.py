"""replicasets, replicasets/status and replicasets/scale (pkg/registry/apps/replicaset). No Pods are
created for them here: that is kube-controller-manager's replicaset controller."""

from __future__ import annotations

from typing import Any

from ...apimachinery import validation
from ...apimachinery.field import ErrorList, Path
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.subresource import keep_status
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from . import validation as v
from .defaults import default_replica_set
from .printing import CONTAINERS, IMAGES, container_cells, count, format_label_selector, spec_of, status_of
from .scale import ScaleREST
from .workload import WorkloadStrategy, drop_terminating_replicas, meta_update, status, status_rest

Object = dict[str, Any]
INFO = ResourceInfo("apps", "v1", "replicasets", "ReplicaSet", "replicaset", True, short_names=("rs",),
                    categories=("all",))
STATUS_COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
GREATER = "cannot be greater than status.replicas"


def validate_spec(spec: Object, path: Path) -> ErrorList:
    """ValidateReplicaSetSpec."""
    errs = v.nonnegative(spec, "replicas", path) + v.nonnegative(spec, "minReadySeconds", path)
    return errs + v.validate_selected_template(spec, path, "deployment")


def validate_replica_set(obj: Object) -> ErrorList:
    """ValidateReplicaSet."""
    errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           Path("metadata"))
    return errs + validate_spec(spec_of(obj), Path("spec"))


def validate_status_update(obj: Object, old: Object) -> ErrorList:
    """ValidateReplicaSetStatusUpdate."""
    path, new_status = Path("status"), status(obj)
    errs = meta_update(obj, old) + v.validate_counts(new_status, STATUS_COUNTS, path)
    for key in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        errs += v.not_greater(new_status, key, "replicas", path, GREATER)
    return errs + v.not_greater(new_status, "availableReplicas", "readyReplicas", path,
                                "cannot be greater than readyReplicas")


class ReplicaSetStrategy(WorkloadStrategy):
    status_zeros = ("replicas",)
    selectable_fields = ("status.replicas",)

    def set_defaults(self, obj: Object) -> None:
        default_replica_set(obj)

    def validate_create(self, obj: Object) -> ErrorList:
        return validate_replica_set(obj)

    def validate_change(self, obj: Object, old: Object) -> ErrorList:
        """rsStrategy.ValidateUpdate: the whole object again, then the update rules."""
        errs = validate_replica_set(obj) + meta_update(obj, old) + validate_spec(spec_of(obj), Path("spec"))
        return errs + v.validate_immutable_selector(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["status.replicas"] = str(count(status_of(obj), "replicas"))
        return fields


def keep_replica_set_status(new: Object, old: Object) -> Object:
    merged = keep_status(new, old)
    drop_terminating_replicas(merged, old)
    return merged


TABLE = TableConvertor((
    NAME,
    TableColumn("Desired", "integer", "", "Replicas is the number of desired pods. This is a pointer to distinguish "
                                          "between explicit zero and unspecified. Defaults to 1. More info: "
                                          "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset"),
    TableColumn("Current", "integer", "", "Replicas is the most recently observed number of non-terminating pods. "
                                          "More info: https://kubernetes.io/docs/concepts/workloads/controllers/"
                                          "replicaset"),
    TableColumn("Ready", "integer", "", "The number of non-terminating pods targeted by this ReplicaSet with a "
                                        "Ready Condition."),
    AGE, CONTAINERS, IMAGES,
    TableColumn("Selector", "string", "", "Selector is a label query over pods that should match the replica count. "
                                          "Label keys and values that must match in order to be controlled by this "
                                          "replica set. It must match the pod template's labels. More info: "
                                          "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/"
                                          "#label-selectors", 1),
), lambda o: [name(o), count(spec_of(o), "replicas"), count(status_of(o), "replicas"),
              count(status_of(o), "readyReplicas"), age(o), *container_cells(o),
              format_label_selector(spec_of(o).get("selector"))])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, ReplicaSetStrategy(INFO), storage, "/registry/replicasets", TABLE)
    return {"replicasets": store, "replicasets/status": status_rest(store, keep_replica_set_status,
                                                                    validate_status_update),
            "replicasets/scale": ScaleREST(store)}
