"""The columns `kubectl get replicationcontrollers` prints (printReplicationController, server-side wide)."""

from __future__ import annotations

from typing import Any

from ....registry.rest import TableColumn
from ....registry.table import AGE, NAME, TableConvertor, age, name
from ..service.table import format_labels

Object = dict[str, Any]
COLUMNS = (
    NAME,
    TableColumn("Desired", "integer", "", "Replicas is the number of desired replicas. This is a pointer to "
                "distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/"
                "docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"),
    TableColumn("Current", "integer", "", "Replicas is the most recently observed number of replicas. More info: "
                "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller"
                "#what-is-a-replicationcontroller"),
    TableColumn("Ready", "integer", "", "The number of ready replicas for this replication controller."),
    AGE,
    TableColumn("Containers", "string", "", "Names of each container in the template.", 1),
    TableColumn("Images", "string", "", "Images referenced by each container in the template.", 1),
    TableColumn("Selector", "string", "", "Selector is a label query over pods that should match the Replicas "
                "count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys "
                "and values that must match in order to be controlled by this replication controller, if empty "
                "defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/"
                "working-with-objects/labels/#label-selectors", 1),
)


def _cells(rc: Object) -> list[Any]:
    spec, status = rc.get("spec") or {}, rc.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [name(rc), spec.get("replicas") or 0, status.get("replicas") or 0, status.get("readyReplicas") or 0,
            age(rc), ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers),
            format_labels(spec.get("selector"))]


TABLE = TableConvertor(COLUMNS, _cells)
