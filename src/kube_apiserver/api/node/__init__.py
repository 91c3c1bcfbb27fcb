"""node.k8s.io/v1: RuntimeClass (pkg/apis/node, pkg/registry/node/runtimeclass)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from .resources import canonical_resource_list, parse_resource_list, validate_limits
from .tolerations import validate_scheduling

Object = dict[str, Any]
GROUP = "node.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "runtimeclasses", "RuntimeClass", "runtimeclass", False)


def _pod_fixed(obj: Object) -> dict[str, Any] | None:
    overhead = obj.get("overhead")
    return overhead.get("podFixed") if isinstance(overhead, dict) else None


class RuntimeClassStrategy(Strategy):
    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        handler = obj.get("handler") or ""
        errs += [field.invalid(field.Path("handler"), handler, m) for m in validation.name_is_dns_label(handler, False)]
        if isinstance(obj.get("overhead"), dict):
            limits = parse_resource_list(_pod_fixed(obj), INFO.kind)
            errs += validate_limits(limits, field.Path("overhead"))
        if isinstance(obj.get("scheduling"), dict):
            errs += validate_scheduling(obj["scheduling"], field.Path("scheduling"))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        errs = super().validate_update(ctx, obj, old)
        return errs + validation.validate_immutable_field(obj.get("handler") or "", old.get("handler") or "",
                                                          field.Path("handler"))

    def canonicalize(self, obj: Object) -> None:
        """Quantities are stored in canonical form, as decoding a resource.Quantity leaves them."""
        if _pod_fixed(obj):
            obj["overhead"]["podFixed"] = canonical_resource_list(parse_resource_list(_pod_fixed(obj), INFO.kind))


TABLE = TableConvertor((NAME, TableColumn("Handler", "string"), AGE),
                       lambda o: [name(o), o.get("handler", ""), age(o)])


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    store = Store(INFO, RuntimeClassStrategy(INFO), storage, "/registry/runtimeclasses", TABLE)
    return APIGroupInfo(GROUP, {"v1": {"runtimeclasses": store}})
