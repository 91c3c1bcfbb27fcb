"""deployments, deployments/status and deployments/scale (pkg/apis/apps validation and
pkg/registry/apps/deployment). Creating a Deployment creates no ReplicaSets or Pods here: that is
kube-controller-manager's deployment controller."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, labels, validation
from ...apimachinery.field import ErrorList, Path
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.subresource import keep_status
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from . import validation as v
from .defaults import default_deployment
from .printing import CONTAINERS, IMAGES, READY, container_cells, count, spec_of, status_of
from .scale import ScaleREST
from .workload import WorkloadStrategy, drop_terminating_replicas, meta_update, status, status_rest

Object = dict[str, Any]
INFO = ResourceInfo("apps", "v1", "deployments", "Deployment", "deployment", True, short_names=("deploy",),
                    categories=("all",))
STRATEGY_TYPES = ("Recreate", "RollingUpdate")
ROLLING_FIELDS = (("MaxUnavailable", "maxUnavailable"), ("MaxSurge", "maxSurge"))
STATUS_COUNTS = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                 "unavailableReplicas")
GREATER = "cannot be greater than status.replicas"


def validate_rolling_update(rolling: Object, path: Path) -> ErrorList:
    """ValidateRollingUpdateDeployment."""
    unavailable, surge = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
    errs = v.validate_positive_int_or_percent(unavailable, path.child("maxUnavailable"))
    errs += v.validate_positive_int_or_percent(surge, path.child("maxSurge"))
    if v.int_or_percent_value(unavailable) == 0 and v.int_or_percent_value(surge) == 0:
        errs.append(field.invalid(path.child("maxUnavailable"), unavailable, "may not be 0 when `maxSurge` is 0"))
    return errs + v.not_more_than_100_percent(unavailable, path.child("maxUnavailable"))


def validate_strategy(strategy: Object, path: Path) -> ErrorList:
    """ValidateDeploymentStrategy."""
    kind, rolling = strategy.get("type", ""), strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [field.forbidden(path.child("rollingUpdate"),
                                    "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, dict):
            return [field.required(path.child("rollingUpdate"), "this should be defaulted and never be nil")]
        return validate_rolling_update(rolling, path.child("rollingUpdate"))
    return [field.not_supported(path, v.strategy_struct(strategy, ROLLING_FIELDS), STRATEGY_TYPES)]


def validate_spec(spec: Object, path: Path) -> ErrorList:
    """ValidateDeploymentSpec."""
    errs = v.nonnegative(spec, "replicas", path)
    errs += v.validate_selected_template(spec, path, "deployment")
    strategy = spec.get("strategy")
    errs += validate_strategy(strategy if isinstance(strategy, dict) else {}, path.child("strategy"))
    errs += v.nonnegative(spec, "minReadySeconds", path)
    errs += v.optional_nonnegative(spec, "revisionHistoryLimit", path)
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None:
        errs += v.nonnegative(spec, "progressDeadlineSeconds", path)
        if deadline <= v.number(spec.get("minReadySeconds")):
            errs.append(field.invalid(path.child("progressDeadlineSeconds"), deadline,
                                      "must be greater than minReadySeconds"))
    return errs


def validate_status_update(obj: Object, old: Object) -> ErrorList:
    """ValidateDeploymentStatusUpdate."""
    path, new_status = Path("status"), status(obj)
    errs = meta_update(obj, old) + v.validate_counts(new_status, STATUS_COUNTS, path)
    errs += v.optional_nonnegative(new_status, "collisionCount", path)
    for key in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        errs += v.not_greater(new_status, key, "replicas", path, GREATER)
    errs += v.not_greater(new_status, "availableReplicas", "readyReplicas", path, "cannot be greater than readyReplicas")
    return errs + v.collision_count_decremented(new_status, status(old))


class DeploymentStrategy(WorkloadStrategy):
    status_reset_fields = (("spec",), ("metadata", "labels"))

    def set_defaults(self, obj: Object) -> None:
        default_deployment(obj)

    def bumps_generation(self, obj: Object, old: Object) -> bool:
        """Annotations are copied to ReplicaSets: changing them is a new generation too."""
        return obj.get("spec") != old.get("spec") or \
            obj["metadata"].get("annotations") != old["metadata"].get("annotations")

    def validate_create(self, obj: Object) -> ErrorList:
        errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                               Path("metadata"))
        return errs + validate_spec(spec_of(obj), Path("spec"))

    def validate_change(self, obj: Object, old: Object) -> ErrorList:
        errs = meta_update(obj, old) + validate_spec(spec_of(obj), Path("spec"))
        return errs + v.validate_immutable_selector(obj, old)


def keep_deployment_status(new: Object, old: Object) -> Object:
    """deploymentStatusStrategy.PrepareForUpdate: spec and labels stay the stored ones."""
    merged = keep_status(new, old)
    meta, old_labels = merged["metadata"], (old.get("metadata") or {}).get("labels")
    if old_labels is None:
        meta.pop("labels", None)
    else:
        meta["labels"] = old_labels
    drop_terminating_replicas(merged, old)
    return merged


def _selector(obj: Object) -> str:
    try:
        return str(labels.selector_from_label_selector(spec_of(obj).get("selector")))
    except labels.SelectorParseError:
        return "<invalid>"


def _cells(obj: Object) -> list[Any]:
    status_ = status_of(obj)
    ready = f"{count(status_, 'readyReplicas')}/{count(spec_of(obj), 'replicas')}"
    return [name(obj), ready, count(status_, "updatedReplicas"), count(status_, "availableReplicas"), age(obj),
            *container_cells(obj), _selector(obj)]


TABLE = TableConvertor((
    NAME, READY,
    TableColumn("Up-to-date", "string", "", "Total number of non-terminating pods targeted by this deployment that "
                                            "have the desired template spec."),
    TableColumn("Available", "string", "", "Total number of available non-terminating pods (ready for at least "
                                           "minReadySeconds) targeted by this deployment."),
    AGE, CONTAINERS, IMAGES,
    TableColumn("Selector", "string", "", "Label selector for pods. Existing ReplicaSets whose pods are selected "
                                          "by this will be the ones affected by this deployment. It must match the "
                                          "pod template's labels.", 1),
), _cells)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, DeploymentStrategy(INFO), storage, "/registry/deployments", TABLE)
    return {"deployments": store, "deployments/status": status_rest(store, keep_deployment_status,
                                                                    validate_status_update),
            "deployments/scale": ScaleREST(store)}
