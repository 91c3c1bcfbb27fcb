"""The Service strategy and its status strategy (pkg/registry/core/service/strategy.go)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ..gotypes import SERVICE, check_decodable
from .clusterips import spec_of
from .defaults import default_service
from .prepare import (
    drop_type_dependent_fields,
    normalize_cluster_ips,
    patch_allocated_values,
    trim_for_dual_stack_downgrade,
)
from .validation import validate_service, validate_service_update

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "services", "Service", "service", True, short_names=("svc",), categories=("all",))
IP_MODES = ("Proxy", "VIP")


class ServiceStrategy(Strategy):
    allow_create_on_update = True
    has_status_subresource = True
    name_validator = staticmethod(validation.name_is_dns1035_label)
    selectable_fields = ("spec.clusterIP", "spec.type")

    def default(self, obj: Object) -> None:
        check_decodable("Service", obj, SERVICE)
        default_service(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        obj["status"] = {"loadBalancer": {}}
        normalize_cluster_ips(obj, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        patch_allocated_values(obj, old)
        normalize_cluster_ips(obj, old)
        drop_type_dependent_fields(obj, old)
        trim_for_dual_stack_downgrade(obj, old)

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return validate_service(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return validate_service_update(obj, old)

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        spec = spec_of(obj)
        fields["spec.clusterIP"] = spec.get("clusterIP") or ""
        fields["spec.type"] = spec.get("type") or ""
        return fields


def _ingress_errors(ingress: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    ip, mode = ingress.get("ip") or "", ingress.get("ipMode")
    if ip:
        errs += validation.is_valid_ip(path.child("ip"), ip)
    if mode is None:
        if ip:
            errs.append(field.required(path.child("ipMode"), "must be specified when `ip` is set"))
    elif not ip:
        errs.append(field.forbidden(path.child("ipMode"), "may not be specified when `ip` is not set"))
    elif mode not in IP_MODES:
        errs.append(field.not_supported(path.child("ipMode"), mode, IP_MODES))
    hostname = ingress.get("hostname") or ""
    if hostname:
        errs += [field.invalid(path.child("hostname"), hostname, m) for m in validation.is_dns1123_subdomain(hostname)]
        if validation.parse_ip_sloppy(hostname) is not None:
            errs.append(field.invalid(path.child("hostname"), hostname, "must be a DNS name, not an IP address"))
    return errs


def validate_load_balancer_status(svc: Object) -> ErrorList:
    """ValidateLoadBalancerStatus: ingress points only for LoadBalancer Services."""
    status = svc.get("status") if isinstance(svc.get("status"), dict) else {}
    balancer = status.get("loadBalancer") if isinstance(status.get("loadBalancer"), dict) else {}
    ingress = [i if isinstance(i, dict) else {} for i in balancer.get("ingress") or []]
    path = Path("status", "loadBalancer", "ingress")
    if ingress and spec_of(svc).get("type") != "LoadBalancer":
        return [field.forbidden(path, "may only be used when `spec.type` is 'LoadBalancer'")]
    return [e for i, item in enumerate(ingress) for e in _ingress_errors(item, path.index(i))]


class ServiceStatusStrategy(SubresourceStrategy):
    """A status write keeps the stored spec; ValidateServiceStatusUpdate."""

    def validate(self, ctx: Context, obj: Object) -> ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + validate_load_balancer_status(obj)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=ServiceStatusStrategy(store.strategy, keep_status))
