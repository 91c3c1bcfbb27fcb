"""nodes/proxy: kube-apiserver proxies it to the node's kubelet (pkg/registry/core/node/rest/proxy.go).
The request is checked as ResourceLocation checks it, then answered as this server answers every request
for a kubelet (kubelet.py)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import errors
from ....endpoints.http import Response
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ..kubelet import unreachable

Object = dict[str, Any]
SCHEMES = ("", "http", "https")


def split_scheme_name_port(node_id: str) -> tuple[str, str, str] | None:
    """utilnet.SplitSchemeNamePort: name, name:port or scheme:name:port."""
    parts = node_id.split(":")
    if len(parts) > 3:
        return None
    scheme = parts[0] if len(parts) == 3 else ""
    name = parts[1] if len(parts) == 3 else parts[0]
    port = parts[-1] if len(parts) > 1 else ""
    return (scheme, name, port) if name and scheme in SCHEMES else None


class NodeProxyREST:
    """connect on nodes/proxy (NodeProxyOptions)."""

    connect_verbs = ("connect",)

    def __init__(self, nodes: Store):
        self.info = ResourceInfo("", "v1", "nodes", "NodeProxyOptions", "", False, subresource="proxy")
        self.nodes = nodes

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Response:
        parsed = split_scheme_name_port(name)
        if parsed is None:
            raise errors.bad_request(f'invalid node request "{name}"')
        node = await self.nodes.get(ctx, parsed[1])
        raise unreachable(node)
