"""The columns `kubectl get nodes` prints (printNode in pkg/printers/internalversion/printers.go; the
server prints with Wide set)."""

from __future__ import annotations

from typing import Any

from ....apimachinery.meta import spec_of, status_of
from ....registry.rest import TableColumn
from ....registry.table import AGE, NAME, TableConvertor, age, name

Object = dict[str, Any]
ROLE_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"
ADDRESSES_DOC = (
    "List of addresses reachable to the node. Queried from cloud provider, if available. More info: "
    "https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, "
    "but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers "
    "should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should "
    "assume that addresses can change during the lifetime of a Node. However, there are some exceptions where "
    "this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP).")
COLUMNS = (
    NAME,
    TableColumn("Status", "string", "", "The status of the node"),
    TableColumn("Roles", "string", "", "The roles of the node"),
    AGE,
    TableColumn("Version", "string", "", "Kubelet Version reported by the node."),
    TableColumn("Internal-IP", "string", "", ADDRESSES_DOC, 1),
    TableColumn("External-IP", "string", "", ADDRESSES_DOC, 1),
    TableColumn("OS-Image", "string", "", "OS Image reported by the node from /etc/os-release (e.g. Debian "
                                          "GNU/Linux 7 (wheezy)).", 1),
    TableColumn("Kernel-Version", "string", "", "Kernel Version reported by the node from 'uname -r' (e.g. "
                                                "3.16.0-0.bpo.4-amd64).", 1),
    TableColumn("Container-Runtime", "string", "", "ContainerRuntime Version reported by the node through runtime "
                                                   "remote API (e.g. containerd://1.4.2).", 1),
)


def node_status(obj: Object) -> str:
    """Ready or NotReady from the Ready condition (Unknown without one), then SchedulingDisabled."""
    ready = [c for c in status_of(obj).get("conditions") or [] if c.get("type") == "Ready"]
    status = ["Unknown"]
    if ready:
        status = ["Ready" if ready[-1].get("status") == "True" else "NotReady"]
    if spec_of(obj).get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def node_roles(obj: Object) -> str:
    """findNodeRoles: node-role.kubernetes.io/<role> labels and the kubernetes.io/role label, sorted."""
    roles: set[str] = set()
    for key, value in ((obj.get("metadata") or {}).get("labels") or {}).items():
        if key.startswith(ROLE_PREFIX) and key[len(ROLE_PREFIX):]:
            roles.add(key[len(ROLE_PREFIX):])
        elif key == ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def node_address(obj: Object, kind: str) -> str:
    for address in status_of(obj).get("addresses") or []:
        if address.get("type") == kind:
            return address.get("address") or ""
    return "<none>"


def _row(obj: Object) -> list[Any]:
    info = status_of(obj).get("nodeInfo") or {}
    return [name(obj), node_status(obj), node_roles(obj), age(obj), info.get("kubeletVersion") or "",
            node_address(obj, "InternalIP"), node_address(obj, "ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


TABLE = TableConvertor(COLUMNS, _row)
