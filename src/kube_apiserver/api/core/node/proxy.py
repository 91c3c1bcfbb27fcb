"""nodes/proxy: kube-apiserver proxies it to the node (pkg/registry/core/node/rest/proxy.go and the REST's
ResourceLocation). The node's connection info comes first (404 for an unknown node, 500 without an
address); a request for the kubelet's port (or no port) goes to the kubelet, which this server does not
reach (kubelet.py); one for another port is proxied to the node's preferred address on that port, once
every address the name resolves to is proxyable."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from ....apimachinery import errors
from ....apimachinery.field import go_quote
from ....apimachinery.meta import status_of
from ....endpoints.http import Response
from ....endpoints.proxy.handler import proxy_request
from ....endpoints.proxy.location import (
    Location,
    is_global_unicast,
    join_preserving_trailing_slash,
    split_scheme_name_port,
)
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ..kubelet import KUBELET_PORT, preferred_address, unreachable

Object = dict[str, Any]
PROXY_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS")


async def proxyable_hostname(hostname: str) -> str | None:
    """proxyutil.IsProxyableHostname: why the name may not be proxied to (None: it may)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(hostname, None, type=socket.SOCK_STREAM)
    except OSError:
        return f"lookup {hostname}: no such host"
    if not infos:
        return "No addresses for hostname"
    if any(not is_global_unicast(str(info[4][0]).split("%", 1)[0]) for info in infos):
        return "address not allowed"
    return None


class NodeProxyREST:
    """connect on nodes/proxy (NodeProxyOptions, the path after /proxy as its `path`)."""

    connect_verbs = ("connect",)
    connect_methods = PROXY_METHODS
    subpath_key = "path"

    def __init__(self, nodes: Store):
        self.info = ResourceInfo("", "v1", "nodes", "NodeProxyOptions", "", False, subresource="proxy")
        self.nodes = nodes

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Response:
        parsed = split_scheme_name_port(name)
        if parsed is None:
            raise errors.bad_request(f"invalid node request {go_quote(name)}")
        scheme, node_name, port = parsed
        node = await self.nodes.get(ctx, node_name)
        host = preferred_address(node)  # GetConnectionInfo
        kubelet = ((status_of(node).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or 0
        if not port or port == str(kubelet if kubelet > 0 else KUBELET_PORT):
            raise unreachable(node)
        refused = await proxyable_hostname(host)
        if refused is not None:
            raise errors.bad_request(refused)
        path = join_preserving_trailing_slash("", (options.get("path") or [""])[0])
        return await proxy_request(request, Location(scheme, host, port, path))
