"""scheduling.k8s.io/v1: PriorityClass (pkg/apis/scheduling, pkg/registry/scheduling), with the system
priority classes every cluster has."""

from __future__ import annotations

import logging
from typing import Any

from ..apimachinery import errors, field, validation
from ..registry.context import Context, UserInfo
from ..registry.rest import ResourceInfo, TableColumn
from ..registry.store import Store
from ..registry.strategy import Strategy
from ..registry.table import AGE, NAME, TableConvertor, age, name
from ..server.api_group_info import APIGroupInfo
from ..storage.factory import StorageFactory

log = logging.getLogger("kube_apiserver.api")
Object = dict[str, Any]
GROUP = "scheduling.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "priorityclasses", "PriorityClass", "priorityclass", False, short_names=("pc",))
SYSTEM_PREFIX = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
SYSTEM_CLASSES = (
    {"name": "system-node-critical", "value": SYSTEM_CRITICAL_PRIORITY + 1000,
     "description": "Used for system critical pods that must not be moved from their current node."},
    {"name": "system-cluster-critical", "value": SYSTEM_CRITICAL_PRIORITY,
     "description": "Used for system critical pods that must run in the cluster, but can be moved to another "
                    "node if necessary."},
)


def known_system_class_error(obj: Object) -> str | None:
    """scheduling.IsKnownSystemPriorityClass: None when it is one, else why not."""
    pc_name, value = obj["metadata"].get("name", ""), obj.get("value", 0)
    for system in SYSTEM_CLASSES:
        if system["name"] == pc_name:
            if system["value"] != value:
                return f"value of {pc_name} PriorityClass must be {system['value']}"
            if obj.get("globalDefault", False):
                return f"globalDefault of {pc_name} PriorityClass must be false"
            return None
    return f"{pc_name} is not a known system priority class"


def validate_preemption_policy(policy: Any, path: field.Path) -> field.ErrorList:
    if policy == "":
        return [field.required(path, "")]
    if policy not in PREEMPTION_POLICIES:
        return [field.not_supported(path, policy, PREEMPTION_POLICIES)]
    return []


class PriorityClassStrategy(Strategy):
    def default(self, obj: Object) -> None:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        """priorityClassStrategy.PrepareForCreate sets generation 1 (and nothing bumps it on update)."""
        super().prepare_for_create(ctx, obj)
        obj["metadata"]["generation"] = 1

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        if obj["metadata"].get("name", "").startswith(SYSTEM_PREFIX):
            why = known_system_class_error(obj)
            if why is not None:
                errs.append(field.forbidden(field.Path("metadata", "name"), f"priority class names with "
                                            f"'{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"))
        elif obj.get("value", 0) > HIGHEST_USER_DEFINABLE_PRIORITY:
            errs.append(field.forbidden(field.Path("value"), f"maximum allowed value of a user defined priority is "
                                                             f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
        if "preemptionPolicy" in obj:
            errs += validate_preemption_policy(obj["preemptionPolicy"], field.Path("preemptionPolicy"))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        errs = super().validate_update(ctx, obj, old)
        if obj.get("value", 0) != old.get("value", 0):
            errs.append(field.forbidden(field.Path("value"), "may not be changed in an update."))
        errs += validation.validate_immutable_field(obj.get("preemptionPolicy"), old.get("preemptionPolicy"),
                                                    field.Path("preemptionPolicy"))
        return errs


class PriorityClassStore(Store):
    """The system classes cannot be deleted (only one global default is the Priority plugin's rule)."""

    async def delete(self, ctx: Context, name_: str, delete_validation: Any = None,
                     options: Any = None) -> tuple[Object, bool]:
        if any(system["name"] == name_ for system in SYSTEM_CLASSES):
            raise errors.forbidden(INFO.resource, GROUP, name_, "this is a system priority class and cannot be "
                                                                "deleted")
        return await super().delete(ctx, name_, delete_validation, options)


TABLE = TableConvertor((
    NAME,
    TableColumn("Value", "integer", "", "value represents the integer value of this priority class."),
    TableColumn("Global-Default", "boolean", "", "globalDefault specifies whether this PriorityClass should be "
                                                 "considered as the default priority for pods that do not have "
                                                 "any priority class."),
    AGE,
    TableColumn("PreemptionPolicy", "string", "", "preemptionPolicy is the Policy for preempting pods with lower "
                                                  "priority."),
), lambda o: [name(o), o.get("value", 0), bool(o.get("globalDefault", False)), age(o), o.get("preemptionPolicy", "")])


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    store = PriorityClassStore(INFO, PriorityClassStrategy(INFO), storage, "/registry/priorityclasses", TABLE)
    return APIGroupInfo(GROUP, {"v1": {"priorityclasses": store}})


def post_start_hooks(group_versions: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    store = group_versions[(GROUP, "v1")]["priorityclasses"].scope.storage
    return {"scheduling/bootstrap-system-priority-classes": lambda: bootstrap_system_priority_classes(store)}


async def bootstrap_system_priority_classes(store: Store) -> None:
    """The post-start hook scheduling/bootstrap-system-priority-classes."""
    ctx = Context(user=UserInfo("system:apiserver", groups=("system:masters",)))
    for system in SYSTEM_CLASSES:
        obj = {"apiVersion": f"{GROUP}/v1", "kind": "PriorityClass", "metadata": {"name": system["name"]},
               "value": system["value"], "description": system["description"]}
        store.strategy.default(obj)
        try:
            await store.create(ctx, obj)
            log.info("created PriorityClass %s with value %d", system["name"], system["value"])
        except errors.StatusError as err:
            if err.code != 409:
                raise
