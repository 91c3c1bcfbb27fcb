"""Server-side printing of the resource.k8s.io kinds (pkg/printers/internalversion/printers.go, v1.34)."""

from __future__ import annotations

from typing import Any

from ...registry.rest import TableColumn
from ...registry.table import AGE, NAME, TableConvertor, age, name

Object = dict[str, Any]
NODE_DESCRIPTION = (
    "NodeName identifies the node which provides the resources in this pool. A field selector can be used to "
    "list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access "
    "from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new "
    "nodes of the same type as some old node might also make new resources available.\n\nExactly one of "
    "NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.")
DRIVER_DESCRIPTION = (
    "Driver identifies the DRA driver providing the capacity information. A field selector can be used to "
    "list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with "
    "a DNS domain owned by the vendor of the driver. This field is immutable.")
POOL_DESCRIPTION = (
    "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not "
    "required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains "
    "separated by slashes. This field is immutable.")


def claim_state(claim: Object) -> str:
    """resourceClaimState: deleted and/or pending, or allocated (and reserved)."""
    deleted = bool((claim.get("metadata") or {}).get("deletionTimestamp"))
    status = claim.get("status") or {}
    states = ["deleted"] if deleted else []
    if status.get("allocation") is None:
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _slice_cells(obj: Object) -> list[Any]:
    spec = obj.get("spec") or {}
    return [name(obj), spec.get("nodeName") or "", spec.get("driver") or "", (spec.get("pool") or {}).get("name") or "",
            age(obj)]


NAME_AGE = TableConvertor((NAME, AGE), lambda o: [name(o), age(o)])
CLAIMS = TableConvertor((
    NAME,
    TableColumn("State", "string", "", "A summary of the current state (allocated, pending, reserved, etc.)."),
    AGE,
), lambda o: [name(o), claim_state(o), age(o)])
SLICES = TableConvertor((
    NAME,
    TableColumn("Node", "string", "", NODE_DESCRIPTION),
    TableColumn("Driver", "string", "", DRIVER_DESCRIPTION),
    TableColumn("Pool", "string", "", POOL_DESCRIPTION),
    AGE,
), _slice_cells)
