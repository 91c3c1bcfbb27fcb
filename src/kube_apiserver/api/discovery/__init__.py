"""discovery.k8s.io/v1: EndpointSlice (pkg/apis/discovery, pkg/registry/discovery/endpointslice)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import Path
from ...apimachinery.validation import validate_immutable_field
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from .validation import ip_warnings, validate_endpoint_slice

Object = dict[str, Any]
GROUP = "discovery.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "endpointslices", "EndpointSlice", "endpointslice", True)
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
OUR_CONTROLLERS = ("endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io")


def _items(obj: Object, key: str) -> list[Object]:
    return [item for item in (obj.get(key) or []) if isinstance(item, dict)]


def set_defaults(obj: Object) -> None:
    """SetDefaults_EndpointPort (name "", protocol TCP); endpoint conditions always print as a struct."""
    for port in _items(obj, "ports"):
        port.setdefault("name", "")
        port.setdefault("protocol", "TCP")
    for endpoint in _items(obj, "endpoints"):
        endpoint.setdefault("conditions", {})


def drop_topology(obj: Object, old: Object | None) -> None:
    """dropTopologyOnV1: deprecatedTopology is not writable through v1 (kept if endpoints are unchanged)."""
    if old is not None and obj.get("endpoints") == old.get("endpoints"):
        return
    for endpoint in _items(obj, "endpoints"):
        endpoint.pop("deprecatedTopology", None)


def add_warnings(ctx: Context, texts: list[str]) -> None:
    """Each warning once, however often an update is retried."""
    ctx.warnings.extend(t for t in texts if t not in ctx.warnings)


def warnings(obj: Object) -> list[str]:
    """warnOnBadIPs: addresses in non-standard forms (not for slices our controllers manage)."""
    if ((obj.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY) in OUR_CONTROLLERS:
        return []
    return [w for i, endpoint in enumerate(_items(obj, "endpoints"))
            for j, address in enumerate(endpoint.get("addresses") or [])
            for w in ip_warnings(Path("endpoints").index(i).child("addresses").index(j), str(address))]


class EndpointSliceStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: Object) -> None:
        set_defaults(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        drop_topology(obj, None)
        deprecated = ["spec.addressType: FQDN endpoints are deprecated"] if obj.get("addressType") == "FQDN" else []
        add_warnings(ctx, deprecated + warnings(obj))

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        labels, old_labels = (obj["metadata"].get("labels") or {}), (old["metadata"].get("labels") or {})
        generation = old["metadata"].get("generation", 1)
        if labels != old_labels:
            obj["metadata"]["generation"] = generation + 1
        drop_topology(obj, old)
        add_warnings(ctx, warnings(obj))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_endpoint_slice(obj)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return super().validate_update(ctx, obj, old) + validate_immutable_field(
            obj.get("addressType") or "", old.get("addressType") or "", Path("addressType"))


def list_with_more(values: list[str], limit: int = 3) -> str:
    """listWithMoreString of the first `limit` values."""
    text = ",".join(values[:limit])
    if len(values) > limit:
        return f"{text} + {len(values) - limit} more..."
    return text or "<unset>"


def format_ports(obj: Object) -> str:
    def one(port: Object) -> str:
        if port.get("port") is not None:
            return str(port["port"])
        return str(port["name"]) if port.get("name") is not None else "*"
    return list_with_more([one(p) for p in _items(obj, "ports")])


def format_endpoints(obj: Object) -> str:
    return list_with_more([str(a) for ep in _items(obj, "endpoints") for a in ep.get("addresses") or []])


TABLE = TableConvertor((
    NAME,
    TableColumn("AddressType", "string", "", "addressType specifies the type of address carried by this "
                "EndpointSlice. All addresses in this slice must be the same type. This field is immutable "
                "after creation. The following address types are currently supported: * IPv4: Represents an "
                "IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain "
                "Name."),
    TableColumn("Ports", "string", "", "ports specifies the list of network ports exposed by each endpoint in "
                "this slice. Each port must have a unique name. When ports is empty, it indicates that there are "
                "no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each "
                "slice may include a maximum of 100 ports."),
    TableColumn("Endpoints", "string", "", "endpoints is a list of unique endpoints in this slice. Each slice "
                "may include a maximum of 1000 endpoints."),
    AGE,
), lambda o: [name(o), o.get("addressType", ""), format_ports(o), format_endpoints(o), age(o)])


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    store = Store(INFO, EndpointSliceStrategy(INFO), storage, "/registry/endpointslices", TABLE)
    return APIGroupInfo(GROUP, {"v1": {"endpointslices": store}})
