"""servicecidrs and servicecidrs/status (pkg/registry/networking/servicecidr): the ranges Service
cluster IPs come from, one or two (one of each IP family).

As in v1.34, a write to the object itself keeps the status it was sent (the strategy neither clears nor
preserves it, and its reset fields name an apiVersion no request has); /status writes only the status."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import OrderedStruct
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST, SubresourceStrategy, keep_status_reset_meta
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, NetworkingStrategy, child, parse_cidr_sloppy

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "servicecidrs", "ServiceCIDR", "servicecidr", False)
MAX_CIDRS = 2
CIDRS_PATH = field.Path("spec", "cidrs")
ONE_PER_FAMILY = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
CIDRS_DOC = ('CIDRs defines the IP blocks in CIDR notation (e.g. "192.168.0.0/24" or "2001:db8::/64") from which '
             "to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is "
             "immutable.")


def cidrs_of(obj: Object) -> Any:
    return (obj.get("spec") or {}).get("cidrs")


def ip_family(cidr: str) -> int:
    """netutils.IPFamilyOfCIDRString: 4, 6, or 0 when it does not parse."""
    network = parse_cidr_sloppy(cidr)
    if network is None:
        return 0
    address = network.network_address
    return 4 if address.version == 4 or getattr(address, "ipv4_mapped", None) is not None else 6


def validate_cidrs(cidrs: list[str] | None, path: field.Path) -> field.ErrorList:
    """validateServiceCIDRSpec."""
    if not cidrs:
        return [field.required(path, "at least one CIDR required")]
    if len(cidrs) > MAX_CIDRS:
        return [field.invalid(path, OrderedStruct((("CIDRs", cidrs),)), "may only hold up to 2 values")]
    errs: field.ErrorList = []
    for i, cidr in enumerate(cidrs):
        errs += validation.is_valid_cidr(path.index(i), cidr)
    if len(cidrs) == MAX_CIDRS and ip_family(cidrs[0]) == ip_family(cidrs[1]) != 0:
        errs.append(field.invalid(path, cidrs, ONE_PER_FAMILY))
    return errs


def validate_cidrs_update(sent: list[str] | None, old: list[str]) -> field.ErrorList:
    """ValidateServiceCIDRUpdate: CIDRs never change; a single-stack range may gain its second family."""
    new = sent or []
    if len(new) == len(old):
        return [field.invalid(CIDRS_PATH.index(i), cidr, validation.FIELD_IMMUTABLE_ERROR_MSG)
                for i, cidr in enumerate(new) if cidr != old[i]]
    if len(old) == 1 and len(new) == MAX_CIDRS:
        errs = [] if new[0] == old[0] else [field.invalid(CIDRS_PATH.index(0), new[0],
                                                          validation.FIELD_IMMUTABLE_ERROR_MSG)]
        return errs + validate_cidrs(new, CIDRS_PATH)
    return [field.invalid(CIDRS_PATH, sent, validation.FIELD_IMMUTABLE_ERROR_MSG)]


class ServiceCIDRStrategy(NetworkingStrategy):
    def default(self, obj: Object) -> None:
        child(obj, "spec")
        child(obj, "status")

    def validate_object(self, obj: Object) -> field.ErrorList:
        return self.validate_meta(obj) + validate_cidrs(cidrs_of(obj), CIDRS_PATH)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateServiceCIDRUpdate alone (the new object is not validated as on create)."""
        return self.meta_update(ctx, obj, old) + validate_cidrs_update(cidrs_of(obj), cidrs_of(old) or [])


class ServiceCIDRStatusStrategy(SubresourceStrategy):
    """ValidateServiceCIDRStatusUpdate checks the metadata only; labels and the like stay as stored."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status_reset_meta)
        self.reset_fields = ()

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        child(obj, "status")

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old)


def status_rest(store: Store) -> StatusREST:
    return StatusREST(store, strategy=ServiceCIDRStatusStrategy(store.strategy))


TABLE = TableConvertor((
    NAME,
    TableColumn("CIDRs", "string", "", CIDRS_DOC),
    AGE,
), lambda o: [name(o), ",".join(cidrs_of(o) or []), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, ServiceCIDRStrategy(INFO), storage, "/registry/servicecidrs", TABLE)
    return {"servicecidrs": store, "servicecidrs/status": status_rest(store)}
