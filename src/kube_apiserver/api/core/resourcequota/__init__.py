"""resourcequotas and resourcequotas/status (pkg/registry/core/resourcequota): status is written only
through /status (by the quota controller and the ResourceQuota admission plugin), spec only through the
main resource; `kubectl get quota` prints what is used of each limit."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, quantity
from ....apimachinery.field import ErrorList, Path
from ....registry.context import Context
from ....registry.rest import ResourceInfo, TableColumn
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ....registry.table import AGE, NAME, TableConvertor, age, name
from ....storage.factory import StorageFactory
from ..pod.strategy import decode_defaults
from ..podspec.defaults import default_resource_list
from .validation import validate_scopes_unchanged, validate_spec, validate_status

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "resourcequotas", "ResourceQuota", "resourcequota", True, short_names=("quota",))
WARNED_RESOURCES = ("cpu", "memory", "storage", "ephemeral-storage")


def set_defaults(obj: Object) -> None:
    """SetObjectDefaults_ResourceQuota: every ResourceList canonical (spec and status are never omitted)."""
    spec, status = obj.setdefault("spec", {}), obj.setdefault("status", {})
    for parent, key in ((spec, "hard"), (status, "hard"), (status, "used")):
        default_resource_list(parent.get(key))


def request_limit_warnings(hard: dict[str, Any]) -> list[str]:
    """WarningsOnCreate: a request limit above the matching limit limit."""
    parsed = {}
    for key, raw in hard.items():
        try:
            parsed[key] = quantity.parse(raw)
        except quantity.QuantityError:
            continue
    warnings = []
    for resource in WARNED_RESOURCES:
        request_name = f"requests.{resource}"
        if request_name not in parsed and resource in ("cpu", "memory") and resource in parsed:
            request_name = resource
        request, limit = parsed.get(request_name), parsed.get(f"limits.{resource}")
        if request is not None and limit is not None and request.value > limit.value:
            warnings.append(f"ResourceQuota {request_name} ({request}) should be less than limits.{resource} "
                            f"({limit})")
    return warnings


class ResourceQuotaStrategy(Strategy):
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        decode_defaults(INFO.kind, set_defaults, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        obj["status"] = {}
        ctx.warnings.extend(request_limit_warnings((obj.get("spec") or {}).get("hard") or {}))

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        errs = super().validate(ctx, obj)
        errs += validate_spec(obj.get("spec") or {}, Path("spec"))
        return errs + validate_status(obj.get("status") or {}, Path("status"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return super().validate_update(ctx, obj, old) + validate_scopes_unchanged(obj, old)


class ResourceQuotaStatusStrategy(SubresourceStrategy):
    """ValidateResourceQuotaStatusUpdate: metadata and status; the spec is the stored one."""

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        status = obj.get("status") or {}
        return Strategy.validate_update(self, ctx, obj, old) + validate_status(status, Path("status"))


def _columns(quota: Object) -> tuple[str, str]:
    """REQUEST and LIMIT: `name: used/hard` for each limit, the limits.* ones under LIMIT."""
    status = quota.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests, limits = [], []
    for resource in sorted(hard):
        column = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        column.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return ", ".join(requests), ", ".join(limits)


# Age comes last since v1.33 (kubernetes#129419).
TABLE = TableConvertor((
    NAME,
    TableColumn("Request", "string", "", "Request represents a minimum amount of cpu/memory that a container may "
                                         "consume."),
    TableColumn("Limit", "string", "", "Limits control the maximum amount of cpu/memory that a container may use "
                                       "independent of contention on the node."),
    AGE,
), lambda o: [name(o), *_columns(o), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, ResourceQuotaStrategy(INFO), storage, "/registry/resourcequotas", TABLE)
    status = StatusREST(store)
    status.strategy = status.store.strategy = ResourceQuotaStatusStrategy(store.strategy, keep_status)
    return {"resourcequotas": store, "resourcequotas/status": status}
