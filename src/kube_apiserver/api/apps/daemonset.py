"""daemonsets and daemonsets/status (pkg/registry/apps/daemonset). The template generation apps/v1
carries in the deprecated.daemonset.template.generation annotation starts at 1 and grows with every
template change. No Pods are created for them here: that is kube-controller-manager's daemonset
controller."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, field, validation
from ...apimachinery.field import ErrorList, Path
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.subresource import keep_status
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from ..core.podspec import validate_pod_template_spec
from ..policy.poddisruptionbudget import selector_struct
from . import validation as v
from .defaults import default_daemon_set
from .printing import (
    CONTAINERS,
    IMAGES,
    container_cells,
    count,
    format_label_selector,
    format_labels,
    pod_spec,
    spec_of,
    status_of,
)
from .workload import WorkloadStrategy, meta_update, status, status_rest

Object = dict[str, Any]
INFO = ResourceInfo("apps", "v1", "daemonsets", "DaemonSet", "daemonset", True, short_names=("ds",),
                    categories=("all",))
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
STRATEGY_TYPES = ("RollingUpdate", "OnDelete")
ROLLING_FIELDS = (("MaxUnavailable", "maxUnavailable"), ("MaxSurge", "maxSurge"))
STATUS_COUNTS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
                 "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable")


def template_generation(obj: Object) -> int:
    """Convert_v1_DaemonSet_To_apps_DaemonSet: the annotation must be an integer (a decoding error)."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION)
    if value is None:
        return 0
    if not isinstance(value, str) or not value.lstrip("+-").isdigit():
        raise errors.bad_request(f'DaemonSet in version "v1" cannot be handled as a DaemonSet: strconv.ParseInt: '
                                 f'parsing "{value}": invalid syntax')
    return int(value)


def set_template_generation(obj: Object, generation: int) -> None:
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    annotations[TEMPLATE_GENERATION] = str(generation)
    meta["annotations"] = annotations


def validate_rolling_update(rolling: Object, path: Path) -> ErrorList:
    """ValidateRollingUpdateDaemonSet: exactly one of maxSurge and maxUnavailable is non-zero."""
    unavailable, surge = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
    errs = v.validate_positive_int_or_percent(unavailable, path.child("maxUnavailable"))
    errs += v.validate_positive_int_or_percent(surge, path.child("maxSurge"))
    errs += v.not_more_than_100_percent(unavailable, path.child("maxUnavailable"))
    errs += v.not_more_than_100_percent(surge, path.child("maxSurge"))
    has_unavailable, has_surge = v.int_or_percent_value(unavailable) != 0, v.int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        errs.append(field.invalid(path.child("maxSurge"), surge, "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(field.required(path.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    return errs


def validate_update_strategy(strategy: Object, path: Path) -> ErrorList:
    """ValidateDaemonSetUpdateStrategy."""
    kind, rolling = strategy.get("type", ""), strategy.get("rollingUpdate")
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, dict):
            return [field.required(path.child("rollingUpdate"), "")]
        return validate_rolling_update(rolling, path.child("rollingUpdate"))
    return [field.not_supported(path, v.strategy_struct(strategy, ROLLING_FIELDS), STRATEGY_TYPES)]


def validate_spec(spec: Object, path: Path) -> ErrorList:
    """ValidateDaemonSetSpec: a missing selector selects nothing, so the template never matches it."""
    selector, template = spec.get("selector"), v.template_of(spec)
    errs = validation.validate_label_selector(selector, path.child("selector"))
    parsed = v.as_selector(selector)
    found = v.template_labels(template)
    if parsed is not None and not parsed.matches(found or {}):
        errs.append(field.invalid(path.child("template", "metadata", "labels"), found, v.NO_MATCH))
    if selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errs.append(field.invalid(path.child("selector"), selector_struct(selector),
                                  "empty selector is invalid for daemonset"))
    errs += validate_pod_template_spec(template, path.child("template"), v.OPTIONS)
    errs += v.validate_restart_policy(template, path.child("template"), "DaemonSet")
    errs += v.nonnegative(spec, "minReadySeconds", path)
    strategy = spec.get("updateStrategy")
    errs += validate_update_strategy(strategy if isinstance(strategy, dict) else {}, path.child("updateStrategy"))
    return errs + v.optional_nonnegative(spec, "revisionHistoryLimit", path)


def validate_daemon_set(obj: Object) -> ErrorList:
    errs = validation.validate_object_meta(obj.get("metadata") or {}, True, validation.name_is_dns_subdomain,
                                           Path("metadata"))
    return errs + validate_spec(spec_of(obj), Path("spec"))


def validate_status_update(obj: Object, old: Object) -> ErrorList:
    """ValidateDaemonSetStatusUpdate."""
    new_status = status(obj)
    errs = meta_update(obj, old) + v.validate_counts(new_status, STATUS_COUNTS, Path("status"))
    errs += v.optional_nonnegative(new_status, "collisionCount", Path("status"))
    return errs + v.collision_count_decremented(new_status, status(old))


class DaemonSetStrategy(WorkloadStrategy):
    status_zeros = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")

    def set_defaults(self, obj: Object) -> None:
        default_daemon_set(obj)

    def default(self, obj: Object) -> None:
        """Kubernetes decodes into the internal type and converts back to v1 for managedFields, which writes
        the annotation ("0" when absent): the writer owns it, as in v1.34's managedFields."""
        super().default(obj)
        set_template_generation(obj, template_generation(obj))

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        set_template_generation(obj, max(template_generation(obj), 1))

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        """A template change bumps the template generation and the generation; other spec changes
        only the generation."""
        super().prepare_for_update(ctx, obj, old)
        generation = template_generation(old)
        if spec_of(obj).get("template") != spec_of(old).get("template"):
            generation += 1
        set_template_generation(obj, generation)

    def validate_create(self, obj: Object) -> ErrorList:
        return validate_daemon_set(obj)

    def validate_change(self, obj: Object, old: Object) -> ErrorList:
        """daemonSetStrategy.ValidateUpdate: the whole object, the update rules, the fixed selector."""
        errs = validate_daemon_set(obj) + meta_update(obj, old) + validate_spec(spec_of(obj), Path("spec"))
        return errs + v.validate_immutable_selector(obj, old)


def keep_daemon_set_status(new: Object, old: Object) -> Object:
    """A status write keeps the stored spec, and with it the template generation."""
    merged = keep_status(new, old)
    set_template_generation(merged, template_generation(old))
    return merged


def _cells(obj: Object) -> list[Any]:
    status_ = status_of(obj)
    counts = [count(status_, key) for key in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                                              "updatedNumberScheduled", "numberAvailable")]
    return [name(obj), *counts, format_labels(pod_spec(obj).get("nodeSelector")), age(obj), *container_cells(obj),
            format_label_selector(spec_of(obj).get("selector"))]


TABLE = TableConvertor((
    NAME,
    TableColumn("Desired", "integer", "", "The total number of nodes that should be running the daemon pod "
                                          "(including nodes correctly running the daemon pod). More info: "
                                          "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
    TableColumn("Current", "integer", "", "The number of nodes that are running at least 1 daemon pod and are "
                                          "supposed to run the daemon pod. More info: https://kubernetes.io/docs/"
                                          "concepts/workloads/controllers/daemonset/"),
    TableColumn("Ready", "integer", "", "numberReady is the number of nodes that should be running the daemon pod "
                                        "and have one or more of the daemon pod running with a Ready Condition."),
    TableColumn("Up-to-date", "integer", "", "The total number of nodes that are running updated daemon pod"),
    TableColumn("Available", "integer", "", "The number of nodes that should be running the daemon pod and have one "
                                            "or more of the daemon pod running and available (ready for at least "
                                            "spec.minReadySeconds)"),
    TableColumn("Node Selector", "string", "", "NodeSelector is a selector which must be true for the pod to fit on a "
                                               "node. Selector which must match a node's labels for the pod to be "
                                               "scheduled on that node. More info: https://kubernetes.io/docs/"
                                               "concepts/configuration/assign-pod-node/"),
    AGE, CONTAINERS, IMAGES,
    TableColumn("Selector", "string", "", "A label query over pods that are managed by the daemon set. Must match in "
                                          "order to be controlled. It must match the pod template's labels. More "
                                          "info: https://kubernetes.io/docs/concepts/overview/working-with-objects/"
                                          "labels/#label-selectors", 1),
), _cells)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, DaemonSetStrategy(INFO), storage, "/registry/daemonsets", TABLE)
    return {"daemonsets": store, "daemonsets/status": status_rest(store, keep_daemon_set_status,
                                                                  validate_status_update)}

