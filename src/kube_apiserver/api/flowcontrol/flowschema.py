"""flowschemas and flowschemas/status (pkg/registry/flowcontrol/flowschema): the strategy, the stored
form, the table kubectl prints and the protobuf description."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from . import structs
from .common import (
    CONDITION_DANGLING,
    GROUP,
    VERSION,
    as_dict,
    as_int,
    as_list,
    ordered,
    validate_status,
)
from .defaults import default_flow_schema
from .flowschema_validation import validate_spec
from .status import status_rest
from .strategy import FlowControlStrategy

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, VERSION, "flowschemas", "FlowSchema", "flowschema", False)


class FlowSchemaStrategy(FlowControlStrategy):
    spec_struct = staticmethod(structs.flow_schema_spec)

    def default(self, obj: Object) -> None:
        default_flow_schema(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        errs += validate_spec(obj["metadata"].get("name") or "", as_dict(obj.get("spec")), field.Path("spec"))
        return errs + validate_status(as_dict(obj.get("status")), field.Path("status"))

    def canonicalize(self, obj: Object) -> None:
        obj["spec"] = stored_spec(as_dict(obj.get("spec")))


def _stored_resource_rule(rule: Object) -> Object:
    out = ordered(rule, ("verbs", "apiGroups", "resources", "clusterScope"))
    if out.get("clusterScope") is not True:
        out.pop("clusterScope", None)
    out["namespaces"] = rule.get("namespaces") or None  # not omitempty: an empty list reads back as null
    return out


def _stored_rule(rule: Object) -> Object:
    out = ordered(rule, ("subjects", "resourceRules", "nonResourceRules"))
    if "resourceRules" in out:
        out["resourceRules"] = [_stored_resource_rule(as_dict(r)) for r in out["resourceRules"]]
    if "nonResourceRules" in out:
        out["nonResourceRules"] = [ordered(as_dict(r), ("verbs", "nonResourceURLs")) for r in out["nonResourceRules"]]
    return out


def stored_spec(spec: Object) -> Object:
    """The spec as Kubernetes stores and serves it: Go field order, omitempty fields left out."""
    out = ordered(spec, ("priorityLevelConfiguration", "matchingPrecedence", "distinguisherMethod", "rules"))
    if "rules" in out:
        out["rules"] = [_stored_rule(as_dict(rule)) for rule in out["rules"]]
    return out


def _missing_level(obj: Object) -> str:
    """"?" until the APF controller reports the Dangling condition."""
    for condition in as_list(as_dict(obj.get("status")).get("conditions")):
        if as_dict(condition).get("type") == CONDITION_DANGLING:
            return str(as_dict(condition).get("status") or "")
    return "?"


def _row(obj: Object) -> list[Any]:
    spec = as_dict(obj.get("spec"))
    method = spec.get("distinguisherMethod")
    method_type = as_dict(method).get("type") or "" if isinstance(method, dict) else "<none>"
    return [name(obj), as_dict(spec.get("priorityLevelConfiguration")).get("name") or "",
            as_int(spec.get("matchingPrecedence")), method_type, age(obj), _missing_level(obj)]


def precedence_order(obj: Object) -> tuple[int, str]:
    """FlowSchemaSequence: lower matchingPrecedence first, then by name."""
    return as_int(as_dict(obj.get("spec")).get("matchingPrecedence")), name(obj)


@dataclass(frozen=True)
class FlowSchemaTable(TableConvertor):
    """printFlowSchemaList prints the schemas in the order they are matched."""

    def convert(self, obj: Object, include_object: str = "Metadata") -> Object:
        if isinstance(obj.get("items"), list):
            obj = {**obj, "items": sorted(obj["items"], key=precedence_order)}
        return super().convert(obj, include_object)


TABLE = FlowSchemaTable((
    NAME,
    TableColumn("PriorityLevel", "string", "", "`name` is the name of the priority level configuration being "
                                               "referenced Required."),
    TableColumn("MatchingPrecedence", "string", "", "`matchingPrecedence` is used to choose among the FlowSchemas "
                "that match a given request. The chosen FlowSchema is among those with the numerically lowest "
                "(which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must "
                "be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as "
                "default."),
    TableColumn("DistinguisherMethod", "string", "", "`distinguisherMethod` defines how to compute the flow "
                "distinguisher for requests that match this schema. `nil` specifies that the distinguisher is "
                "disabled and thus will always be the empty string."),
    AGE,
    TableColumn("MissingPL", "string", "", "references a broken or non-existent PriorityLevelConfiguration"),
), _row)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, FlowSchemaStrategy(INFO), storage, "/registry/flowschemas", TABLE)
    return {"flowschemas": store, "flowschemas/status": status_rest(store)}
