"""The subresources a kubelet serves: pods/log, exec, attach and portforward, and pods/proxy, which goes to
the pod's IP directly. This server has no kubelets (DESIGN.md non-goals): they answer as kube-apiserver
does when it cannot reach one. An unscheduled pod has no host (400; its log is empty, as LogLocation gives
no location); a scheduled pod's node is looked up as GetConnectionInfo does (404 for an unknown node),
then its kubelet cannot be reached (kubelet.py), unless the node is simulated (kwok.x-k8s.io/node=fake):
then its log is a line saying no process runs, and exec answers over websockets with that line and exit
code 0. pods/proxy is proxied as kube-apiserver proxies it (endpoints/proxy)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import errors, wsstream
from ....apimachinery.field import go_quote
from ....endpoints.http import Response, UpgradeResponse
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
from ..kubelet import is_simulated, simulated_exec_output, simulated_log, unreachable

Object = dict[str, Any]
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
PROXY_METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS")
# ConnectMethods of exec, attach and portforward (websockets and SPDY upgrades start as GET or POST).
STREAM_METHODS = ("GET", "POST")


def _container_names(pod: Object) -> list[str]:
    spec = pod.get("spec") or {}
    return [c.get("name", "") for key in CONTAINER_LISTS for c in spec.get(key) or []]


def validate_container(container: str, pod: Object) -> str:
    """validateContainer: the named container, or the pod's only one."""
    name = pod["metadata"].get("name", "")
    if container:
        if container not in _container_names(pod):
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        return container
    containers = (pod.get("spec") or {}).get("containers") or []
    if len(containers) == 1:
        return containers[0].get("name", "")
    if not containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                             f"[{' '.join(_container_names(pod))}]")


class LogREST:
    """GET pods/log: empty for a pod without a node; otherwise the node cannot be reached."""

    connect_verbs = ("get",)

    def __init__(self, pods: Store, nodes: Store):
        self.info = ResourceInfo("", "v1", "pods", "Pod", "", True, subresource="log")
        self.pods, self.nodes = pods, nodes

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Response:
        pod = await self.pods.get(ctx, name)
        container = validate_container((options.get("container") or [""])[0], pod)
        if not (pod.get("spec") or {}).get("nodeName"):
            return Response(200, b"", "text/plain")
        node = await self.nodes.get(ctx, pod["spec"]["nodeName"])
        if is_simulated(node):
            return Response(200, simulated_log(pod, container, options), "text/plain")
        raise unreachable(node)


async def pod_location(pods: Store, ctx: Context, id_: str) -> Location:
    """pod.ResourceLocation: "name", "name:port" or "scheme:name:port" at the pod's first IP; without a
    port, the first container's first declared port (none: the scheme's)."""
    parsed = split_scheme_name_port(id_)
    if parsed is None:
        raise errors.bad_request(f"invalid pod request {go_quote(id_)}")
    scheme, name, port = parsed
    pod = await pods.get(ctx, name)
    if not port:
        declared = next((c["ports"] for c in (pod.get("spec") or {}).get("containers") or [] if c.get("ports")), [])
        port = str(declared[0].get("containerPort", 0)) if declared else ""
    ips = (pod.get("status") or {}).get("podIPs") or []
    pod_ip = (ips[0].get("ip") or "") if ips else ""
    if not is_global_unicast(pod_ip):  # loopback, link-local, multicast and unset addresses are refused
        raise errors.bad_request("address not allowed")
    return Location(scheme, pod_ip, port)


class ConnectREST:
    """exec, attach, portforward: connect verbs that would be proxied to the pod's kubelet; proxy, to the
    pod itself."""

    connect_verbs = ("connect",)

    def __init__(self, pods: Store, nodes: Store, subresource: str, kind: str):
        self.info = ResourceInfo("", "v1", "pods", kind, "", True, subresource=subresource)
        self.pods, self.nodes = pods, nodes
        self.connect_methods = PROXY_METHODS if subresource == "proxy" else STREAM_METHODS
        self.subpath_key = "path" if subresource == "proxy" else ""  # PodProxyOptions.path

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Response:
        subresource = self.info.subresource
        if subresource == "proxy":
            location = await pod_location(self.pods, ctx, name)
            path = join_preserving_trailing_slash(location.path, (options.get("path") or [""])[0])
            return await proxy_request(request, location.with_path(path))
        pod = await self.pods.get(ctx, name)
        container = ""
        if subresource in ("exec", "attach"):
            container = validate_container((options.get("container") or [""])[0], pod)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")
        node = await self.nodes.get(ctx, pod["spec"]["nodeName"])
        if is_simulated(node) and subresource in ("exec", "attach"):
            return simulated_exec(pod, container, options, request)
        raise unreachable(node)


def simulated_exec(pod: Object, container: str, options: dict[str, list[str]], request: Any) -> Response:
    """A simulated container's exec (or attach), over the websocket channel protocol: stdout says no process
    runs, the error channel carries Success (exit code 0), then the connection closes."""
    headers = request.headers
    protocol = wsstream.negotiate(headers) if wsstream.is_websocket_request(headers) else None
    if protocol is None:
        raise errors.bad_request("the simulated kubelet answers exec and attach over websockets only (subprotocol "
                                 f"{' or '.join(wsstream.CHANNEL_PROTOCOLS)})")
    output = simulated_exec_output(pod, container, options.get("command") or [])
    status = b'{"metadata":{},"status":"Success"}'

    async def frames() -> Any:
        yield wsstream.channel_message(wsstream.STDOUT, output)
        yield wsstream.channel_message(wsstream.ERROR, status)
        yield wsstream.close_frame()

    return UpgradeResponse(wsstream.handshake_headers(headers, protocol), frames())
