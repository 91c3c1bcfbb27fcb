"""poddisruptionbudgets and poddisruptionbudgets/status (pkg/apis/policy, pkg/registry/policy/poddisruptionbudget).

Spec changes bump metadata.generation; status is written only through /status, which validates the
status alone (ValidatePodDisruptionBudgetStatusUpdate)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import OrderedStruct
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .conditions import validate_conditions

Object = dict[str, Any]
GROUP = "policy"
INFO = ResourceInfo(GROUP, "v1", "poddisruptionbudgets", "PodDisruptionBudget", "poddisruptionbudget", True,
                    short_names=("pdb",))
EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
STATUS_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
# The label policy/v1beta1 used to express its empty selector (pkg/apis/policy/helper.go).
V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
V1BETA1_SENTINELS = ({"matchExpressions": [{"key": V1BETA1_LABEL, "operator": "Exists"}]},
                     {"matchExpressions": [{"key": V1BETA1_LABEL, "operator": "DoesNotExist"}]})


def strip_v1beta1_label(spec: Object) -> None:
    """Convert_v1_PodDisruptionBudget_To_policy: the v1beta1 label never mixes with user selectors."""
    selector = spec.get("selector")
    if not isinstance(selector, dict) or selector in V1BETA1_SENTINELS:
        return
    labels = selector.get("matchLabels")
    if isinstance(labels, dict) and V1BETA1_LABEL in labels:
        del labels[V1BETA1_LABEL]
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list):
        index = next((i for i, e in enumerate(exprs) if isinstance(e, dict) and e.get("key") == V1BETA1_LABEL), -1)
        if index >= 0:
            del exprs[index]
    for key in ("matchLabels", "matchExpressions"):
        if key in selector and not selector[key]:
            del selector[key]


def zero_status(obj: Object) -> None:
    """The status counters are not omitempty: a real server always prints them."""
    status = obj.get("status")
    status = status if isinstance(status, dict) else {}
    for key in STATUS_COUNTS:
        status.setdefault(key, 0)
    obj["status"] = status


def selector_struct(selector: Any) -> Any:
    """A metav1.LabelSelector as json.Marshal renders it (fields in declaration order)."""
    if not isinstance(selector, dict):
        return None
    items: list[tuple[str, Any]] = []
    if selector.get("matchLabels"):
        items.append(("matchLabels", selector["matchLabels"]))
    if selector.get("matchExpressions"):
        items.append(("matchExpressions", [_requirement_struct(r) for r in selector["matchExpressions"]]))
    return OrderedStruct(tuple(items))


def _requirement_struct(req: Any) -> Any:
    if not isinstance(req, dict):
        return req
    items: list[tuple[str, Any]] = [("key", req.get("key") or ""), ("operator", req.get("operator") or "")]
    if req.get("values"):
        items.append(("values", req["values"]))
    return OrderedStruct(tuple(items))


def _spec_struct(spec: Object) -> OrderedStruct:
    """The internal policy.PodDisruptionBudgetSpec (no json tags: Go field names)."""
    return OrderedStruct((("MinAvailable", spec.get("minAvailable")), ("Selector", selector_struct(spec.get("selector"))),
                          ("MaxUnavailable", spec.get("maxUnavailable")),
                          ("UnhealthyPodEvictionPolicy", spec.get("unhealthyPodEvictionPolicy"))))


def validate_int_or_percent(value: Any, path: field.Path) -> field.ErrorList:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent (pkg/apis/apps/validation)."""
    if isinstance(value, str):
        errs = [field.invalid(path, value, msg) for msg in validation.is_valid_percent(value)]
        if not errs and int(value[:-1]) > 100:
            errs.append(field.invalid(path, value, "must not be greater than 100%"))
        return errs
    return validation.validate_nonnegative_field(value, path)


def validate_spec(spec: Object, path: field.Path) -> field.ErrorList:
    """ValidatePodDisruptionBudgetSpec."""
    errs: field.ErrorList = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(field.invalid(path, _spec_struct(spec), "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            errs += validate_int_or_percent(spec[key], path.child(key))
    errs += validation.validate_label_selector(spec.get("selector"), path.child("selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(field.not_supported(path.child("unhealthyPodEvictionPolicy"), policy, EVICTION_POLICIES))
    return errs


def validate_status(status: Object, path: field.Path) -> field.ErrorList:
    """ValidatePodDisruptionBudgetStatusUpdate for policy/v1."""
    errs = validate_conditions(status.get("conditions"), path.child("conditions"))
    for key in STATUS_COUNTS:
        errs += validation.validate_nonnegative_field(status.get(key) or 0, path.child(key))
    return errs


class PodDisruptionBudgetStrategy(Strategy):
    allow_unconditional_update = False
    tracks_generation = True
    has_status_subresource = True
    # Only the generic ObjectMeta checks apply to the name (ValidatePodDisruptionBudget skips ValidateObjectMeta).
    name_validator = staticmethod(validation.validate_path_segment_name)

    def default(self, obj: Object) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            strip_v1beta1_label(spec)
        else:
            obj["spec"] = {}

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        zero_status(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_spec(obj.get("spec") or {}, field.Path("spec"))


class PodDisruptionBudgetStatusStrategy(SubresourceStrategy):
    """The status strategy: spec from the stored object, only the status validated."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)
        self.allow_unconditional_update = parent.allow_unconditional_update

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        zero_status(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_status(obj.get("status") or {},
                                                                              field.Path("status"))


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=PodDisruptionBudgetStatusStrategy(store.strategy))


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


TABLE = TableConvertor((
    NAME,
    TableColumn("Min Available", "string", "", "The minimum number of pods that must be available."),
    TableColumn("Max Unavailable", "string", "", "The maximum number of pods that may be unavailable."),
    TableColumn("Allowed Disruptions", "integer", "", "Calculated number of pods that may be disrupted at this time."),
    AGE,
), lambda o: [name(o), _int_or_string((o.get("spec") or {}).get("minAvailable")),
              _int_or_string((o.get("spec") or {}).get("maxUnavailable")),
              (o.get("status") or {}).get("disruptionsAllowed", 0), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, PodDisruptionBudgetStrategy(INFO), storage, "/registry/poddisruptionbudgets", TABLE)
    return {"poddisruptionbudgets": store, "poddisruptionbudgets/status": status_rest(store)}
