"""services/proxy (pkg/registry/core/service/proxy.go and the REST's ResourceLocation in storage.go, as
v1.34 has them): the service's Endpoints name one ready address, checked against the pod it targets, and
the request is proxied there (endpoints/proxy). A port given by number is looked up in the service first
for its name; a named or absent port is matched against the Endpoints ports directly."""

from __future__ import annotations

import logging
import random
import re
from typing import Any

from ....apimachinery import errors
from ....apimachinery.field import go_quote
from ....endpoints.http import Request, Response
from ....endpoints.proxy.handler import proxy_request
from ....endpoints.proxy.location import Location, join_path, split_scheme_name_port
from ....registry.context import Context
from ....registry.rest import ResourceInfo

log = logging.getLogger("kube_apiserver.proxy")
Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "services", "ServiceProxyOptions", "", True, subresource="proxy")
PROXY_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS")
_GO_INT = re.compile(r"[+-]?[0-9]+")  # what strconv.ParseInt(s, 10, 64) accepts


class ServiceProxyREST:
    """connect on services/proxy (ServiceProxyOptions, the path after /proxy as its `path`)."""

    connect_verbs = ("connect",)
    connect_methods = PROXY_METHODS
    subpath_key = "path"

    def __init__(self, services: Any, endpoints: Any, pods: Any):
        self.info = INFO
        self.services, self.endpoints, self.pods = services, endpoints, pods

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Request) -> Response:
        location = await self.resource_location(ctx, name)
        path = (options.get(self.subpath_key) or [""])[0]
        return await proxy_request(request, location.with_path(join_path(location.path, path)))

    async def _port_name(self, ctx: Context, name: str, port: str) -> str:
        """A port number is the name of the service port with that number (503 when it has none)."""
        if not _GO_INT.fullmatch(port):
            return port
        number = int(port)
        service = await self.services.get(ctx, name)
        for service_port in (service.get("spec") or {}).get("ports") or []:
            if service_port.get("port") == number:
                return service_port.get("name") or ""
        raise errors.service_unavailable(f"no service port {number} found for service {go_quote(name)}")

    async def resource_location(self, ctx: Context, id_: str) -> Location:
        """ResourceLocation: "name", "name:port" or "scheme:name:port" to a valid ready address."""
        parsed = split_scheme_name_port(id_)
        if parsed is None:
            raise errors.bad_request(f"invalid service request {go_quote(id_)}")
        scheme, name, port = parsed
        port_name = await self._port_name(ctx, name, port)
        subsets = (await self.endpoints.get(ctx, name)).get("subsets") or []
        if not subsets:
            raise errors.service_unavailable(f"no endpoints available for service {go_quote(name)}")
        seed = random.randrange(len(subsets))  # a random subset to start from, as Kubernetes does
        for i in range(len(subsets)):
            subset = subsets[(seed + i) % len(subsets)]
            addresses = subset.get("addresses") or []
            if not addresses:
                continue
            for endpoint_port in subset.get("ports") or []:
                if (endpoint_port.get("name") or "") == port_name:
                    found = await self._valid_address(ctx, addresses)
                    if found is not None:
                        return Location(scheme, found, str(endpoint_port.get("port")))
                    log.info("failed to find a valid address, skipping subset of service %s", name)
        raise errors.service_unavailable(f"no endpoints available for service {go_quote(id_)}")

    async def _valid_address(self, ctx: Context, addresses: list[Object]) -> str | None:
        """From a random start, the first address whose target pod has its IP (isValidAddress)."""
        seed = random.randrange(len(addresses))
        for i in range(len(addresses)):
            address = addresses[(seed + i) % len(addresses)]
            why = await self._invalid(ctx, address)
            if why is None:
                return address.get("ip") or ""
            log.info("address %s isn't valid (%s)", address.get("ip"), why)
        return None

    async def _invalid(self, ctx: Context, address: Object) -> str | None:
        target = address.get("targetRef")
        if not isinstance(target, dict):
            return "address has no target ref"
        if target.get("namespace", "") != ctx.namespace:
            return "address namespace doesn't match context namespace"
        try:
            pod = await self.pods.get(ctx, target.get("name", ""))
        except errors.StatusError as err:
            return err.message
        pod_ips = [ip.get("ip") for ip in (pod.get("status") or {}).get("podIPs") or []]
        return None if address.get("ip") in pod_ips else f"pod ip(s) doesn't match endpoint ip: {pod_ips}"
