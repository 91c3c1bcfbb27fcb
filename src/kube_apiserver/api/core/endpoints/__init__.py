"""endpoints (pkg/registry/core/endpoint): the addresses behind a Service, deprecated since v1.33 in
favour of discovery.k8s.io/v1 EndpointSlices (every answer carries that warning)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field
from ....registry.context import Context
from ....registry.rest import ResourceInfo, TableColumn
from ....registry.store import Store
from ....registry.strategy import Strategy
from ....registry.table import AGE, NAME, TableConvertor, age, name
from ....storage.factory import StorageFactory
from ..gotypes import ENDPOINTS, check_decodable
from .repack import repack
from .validation import validate_endpoints

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "endpoints", "Endpoints", "endpoints", True, short_names=("ep",))
DEPRECATED = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
MAX_SHOWN = 3


def set_defaults(obj: Object) -> None:
    """SetDefaults_EndpointPort: protocol TCP."""
    for subset in obj.get("subsets") or []:
        for port in (subset.get("ports") or []) if isinstance(subset, dict) else []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


class EndpointsStrategy(Strategy):
    allow_create_on_update = True

    def default(self, obj: Object) -> None:
        check_decodable("Endpoints", obj, ENDPOINTS)
        set_defaults(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return validate_endpoints(obj)

    def canonicalize(self, obj: Object) -> None:
        if obj.get("subsets"):
            obj["subsets"] = repack(obj["subsets"])


class EndpointsStore(Store):
    """Every request gets the deprecation warning, before anything else happens (the installer adds a
    storage's `warnings` to the request, as kube-apiserver's AddWarningsHandler does)."""

    warnings = (DEPRECATED,)


def format_endpoints(obj: Object) -> str:
    """formatEndpoints: up to three ip:port (or ip without ports), then how many more."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = subset.get("addresses") or []
        for port in subset.get("ports") or [None]:
            count += len(addresses)
            for address in addresses:
                if len(shown) < MAX_SHOWN:
                    ip = address.get("ip", "")
                    host = f"[{ip}]" if ":" in ip else ip
                    shown.append(ip if port is None else f"{host}:{port.get('port', 0)}")
    text = ",".join(shown)
    return f"{text} + {count - MAX_SHOWN} more..." if count > MAX_SHOWN else text


SUBSETS_DOC = ("The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to "
               "the IPs they share. A single address with multiple ports, some of which are ready and some of which "
               "are not (because they come from different containers) will result in the address being displayed "
               "in different subsets for the different ports. No address will appear in both Addresses and "
               "NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.")
TABLE = TableConvertor((NAME, TableColumn("Endpoints", "string", "", SUBSETS_DOC), AGE),
                       lambda o: [name(o), format_endpoints(o), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"endpoints": EndpointsStore(INFO, EndpointsStrategy(INFO), storage, "/registry/services/endpoints",
                                        TABLE)}
