"""Where a node's kubelet listens (GetConnectionInfo of pkg/kubelet/client), for the requests kube-apiserver
proxies to kubelets: nodes/proxy and the pods' log, exec, attach, portforward and proxy. This server has no
kubelets (DESIGN.md non-goals): once the node and its kubelet are known, it answers with a clear 503."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors
from ...apimachinery.meta import status_of
from ...registry.rest import ResourceInfo

Object = dict[str, Any]
NODES = ResourceInfo("", "v1", "nodes", "Node", "node", False, short_names=("no",))
NODES_KEY = "/registry/minions"
# --kubelet-preferred-address-types default
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
KUBELET_PORT = 10250


def preferred_address(node: Object) -> str:
    """nodeutil.GetPreferredNodeAddress; a plain error (500) when the node reports none."""
    addresses = status_of(node).get("addresses") or []
    for kind in PREFERRED_ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == kind and address.get("address"):
                return address["address"]
    known = " ".join(f"{{{a.get('type', '')} {a.get('address', '')}}}" for a in addresses)
    raise errors.StatusError(500, "", f"no preferred addresses found; known addresses: [{known}]")


def kubelet_endpoint(node: Object) -> str:
    """The node's preferred address and the kubelet port it reports (10250 when none)."""
    port = ((status_of(node).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or 0
    host = preferred_address(node)
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port if port > 0 else KUBELET_PORT}"


def unreachable(node: Object) -> errors.StatusError:
    name = (node.get("metadata") or {}).get("name", "")
    return errors.service_unavailable(f"error trying to reach service: this API server does not connect to "
                                      f"kubelets (node {name}, kubelet {kubelet_endpoint(node)})")


# ---- simulated nodes (kwok's annotation; the node-simulator runs them): their kubelet answers here ----

SIMULATED_NODE_ANNOTATION = "kwok.x-k8s.io/node"
SIMULATED_NODE_VALUE = "fake"


def is_simulated(node: Object | None) -> bool:
    annotations = ((node or {}).get("metadata") or {}).get("annotations") or {}
    return annotations.get(SIMULATED_NODE_ANNOTATION) == SIMULATED_NODE_VALUE


def _where(pod: Object, container: str) -> str:
    meta = pod.get("metadata") or {}
    node = (pod.get("spec") or {}).get("nodeName", "")
    return f"container {container} of pod {meta.get('namespace', '')}/{meta.get('name', '')} on node {node}"


def simulated_log(pod: Object, container: str, options: dict[str, list[str]]) -> bytes:
    """A simulated container's log: one line saying so (tailLines=0 and limitBytes are honoured; with
    timestamps, the container's start time leads it)."""
    if (options.get("tailLines") or [""])[0] == "0":
        return b""
    line = f"simulated {_where(pod, container)}: no real process runs\n"
    if (options.get("timestamps") or [""])[0] == "true":
        line = f"{(pod.get('status') or {}).get('startTime') or ''} {line}"
    body = line.encode()
    limit = (options.get("limitBytes") or [""])[0]
    return body[: int(limit)] if limit.isdigit() and int(limit) > 0 else body


def simulated_exec_output(pod: Object, container: str, command: list[str]) -> bytes:
    """What exec (a command) or attach (no command) prints for a simulated container."""
    done = f"the command {' '.join(command)!r} was not run" if command else "there is nothing to attach to"
    return f"simulated {_where(pod, container)}: no real process runs; {done}\n".encode()
