"""The subresources a kubelet serves: pods/log, exec, attach, portforward and proxy. This server has no
kubelets (DESIGN.md non-goals): they answer as kube-apiserver does when it cannot reach one. An
unscheduled pod has no host (400; its log is empty, as LogLocation gives no location); a scheduled
pod's node is looked up as GetConnectionInfo does (404 for an unknown node), then its kubelet cannot be
reached (kubelet.py)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import errors
from ....endpoints.http import Response
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.store import Store
from ..kubelet import unreachable

Object = dict[str, Any]
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


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


async def no_kubelet(nodes: Store, ctx: Context, pod: Object) -> errors.StatusError:
    """GetConnectionInfo for the pod's node: 404 for an unknown node, else its kubelet is out of reach."""
    node = await nodes.get(ctx, pod["spec"]["nodeName"])
    return unreachable(node)


class LogREST:
    """GET pods/log: empty for a pod without a node; otherwise the node cannot be reached."""

    connect_verbs = ("get",)

    def __init__(self, pods: Store, nodes: Store):
        self.info = ResourceInfo("", "v1", "pods", "Pod", "", True, subresource="log")
        self.pods, self.nodes = pods, nodes

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Response:
        pod = await self.pods.get(ctx, name)
        validate_container((options.get("container") or [""])[0], pod)
        if not (pod.get("spec") or {}).get("nodeName"):
            return Response(200, b"", "text/plain")
        raise await no_kubelet(self.nodes, ctx, pod)


class ConnectREST:
    """exec, attach, portforward, proxy: connect verbs that would be proxied to the pod's kubelet."""

    connect_verbs = ("connect",)

    def __init__(self, pods: Store, nodes: Store, subresource: str, kind: str):
        self.info = ResourceInfo("", "v1", "pods", kind, "", True, subresource=subresource)
        self.pods, self.nodes = pods, nodes

    async def connect(self, ctx: Context, name: str, options: dict[str, list[str]], request: Any) -> Response:
        subresource = self.info.subresource
        pod = await self.pods.get(ctx, name)
        if subresource in ("exec", "attach"):
            validate_container((options.get("container") or [""])[0], pod)
        if subresource == "proxy":
            raise errors.bad_request("address not allowed")
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")
        raise await no_kubelet(self.nodes, ctx, pod)
