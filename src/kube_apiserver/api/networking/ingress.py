"""ingresses and ingresses/status (pkg/registry/networking/ingress); an Ingress created without a
class gets the default IngressClass from the DefaultIngressClass admission plugin.

Spec changes bump metadata.generation; status is written only through /status, which validates the
load balancer status alone (ValidateIngressStatusUpdate)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from . import ingress_validation as checks
from .common import GROUP, NetworkingStrategy, child, items, omit_empty

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "ingresses", "Ingress", "ingress", True, short_names=("ing",))
MAX_LISTED_HOSTS = 3


def normalize_backend(backend: Any) -> None:
    """Fields Go always prints: a service's name and port, a resource's apiGroup, kind and name."""
    if not isinstance(backend, dict):
        return
    if isinstance(backend.get("service"), dict):
        backend["service"].setdefault("name", "")
        child(backend["service"], "port")
    if isinstance(backend.get("resource"), dict):
        for key, zero in (("apiGroup", None), ("kind", ""), ("name", "")):
            backend["resource"].setdefault(key, zero)


def normalize_spec(spec: Object) -> None:
    normalize_backend(spec.get("defaultBackend"))
    for rule in items(spec, "rules"):
        for http_path in items(rule.get("http"), "paths"):
            normalize_backend(child(http_path, "backend"))


def normalize_status(obj: Object) -> None:
    """status.loadBalancer is a struct: always printed, as are each port status's port and protocol."""
    balancer = child(child(obj, "status"), "loadBalancer")
    for ingress in items(balancer, "ingress"):
        for port in items(ingress, "ports"):
            port.setdefault("port", 0)
            port.setdefault("protocol", "")


def _omit_zero_backend(backend: Any) -> None:
    if isinstance(backend, dict) and isinstance(backend.get("service"), dict):
        omit_empty(backend["service"].get("port"), "name", "number")


def omit_zero_fields(obj: Object) -> None:
    """The omitempty fields a request may have sent as zero values."""
    spec, balancer = obj.get("spec") or {}, (obj.get("status") or {}).get("loadBalancer")
    _omit_zero_backend(spec.get("defaultBackend"))
    for rule in items(spec, "rules"):
        omit_empty(rule, "host")
        for http_path in items(rule.get("http"), "paths"):
            omit_empty(http_path, "path")
            _omit_zero_backend(http_path.get("backend"))
    for tls in items(spec, "tls"):
        omit_empty(tls, "hosts", "secretName")
    omit_empty(spec, "tls", "rules")
    for ingress in items(balancer, "ingress"):
        omit_empty(ingress, "ip", "hostname", "ports")
    omit_empty(balancer, "ingress")


class IngressStrategy(NetworkingStrategy):
    error_group = "extensions"  # the internal type is registered in extensions first, as in v1.34
    tracks_generation = True
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        normalize_spec(child(obj, "spec"))

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        normalize_status(obj)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        normalize_status(obj)

    def validate_object(self, obj: Object) -> field.ErrorList:
        """ValidateIngressCreate."""
        spec_errs = checks.validate_spec(obj.get("spec") or {}, field.Path("spec"), checks.Options())
        return self.validate_meta(obj) + spec_errs + checks.validate_class_annotation(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateIngressUpdate: what the stored object already had may stay."""
        spec_errs = checks.validate_spec(obj.get("spec") or {}, field.Path("spec"), checks.update_options(old))
        return self.meta_update(ctx, obj, old) + self.validate_meta(obj) + spec_errs

    def canonicalize(self, obj: Object) -> None:
        omit_zero_fields(obj)


class IngressStatusStrategy(SubresourceStrategy):
    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        normalize_status(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateIngressStatusUpdate."""
        balancer = (obj.get("status") or {}).get("loadBalancer") or {}
        old_balancer = (old.get("status") or {}).get("loadBalancer") or {}
        return Strategy.validate_update(self, ctx, obj, old) + \
            checks.validate_load_balancer(balancer, old_balancer, field.Path("status", "loadBalancer"))

    def canonicalize(self, obj: Object) -> None:
        self.parent.canonicalize(obj)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=IngressStatusStrategy(store.strategy))


def format_hosts(rules: list[Object]) -> str:
    """formatHosts: at most three hosts, `*` when no rule names one."""
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == MAX_LISTED_HOSTS:
            more = True
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    return ",".join(hosts) + (f" + {len(rules) - MAX_LISTED_HOSTS} more..." if more else "")


def format_address(obj: Object) -> str:
    """ingressLoadBalancerStatusStringer (wide: the server prints whole addresses)."""
    balancer = (obj.get("status") or {}).get("loadBalancer")
    return ",".join(sorted({i.get("ip") or i.get("hostname") for i in items(balancer, "ingress")} - {None, ""}))


def _row(obj: Object) -> list[Any]:
    spec = obj.get("spec") or {}
    class_name = spec.get("ingressClassName")
    return [name(obj), "<none>" if class_name is None else class_name, format_hosts(items(spec, "rules")),
            format_address(obj), "80, 443" if spec.get("tls") else "80", age(obj)]


TABLE = TableConvertor((
    NAME,
    TableColumn("Class", "string", "", "The name of the IngressClass resource that should be used for additional "
                                       "configuration"),
    TableColumn("Hosts", "string", "", "Hosts that incoming requests are matched against before the ingress rule"),
    TableColumn("Address", "string", "", "Address is a list containing ingress points for the load-balancer"),
    TableColumn("Ports", "string", "", "Ports of TLS configurations that open"),
    AGE,
), _row)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, IngressStrategy(INFO), storage, "/registry/ingress", TABLE)
    return {"ingresses": store, "ingresses/status": status_rest(store)}
