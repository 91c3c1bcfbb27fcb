"""The columns `kubectl get pods` prints (printPod in pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from ....apimachinery.clock import wall_now
from ....registry.rest import TableColumn
from ....registry.table import AGE, NAME, TableConvertor, age, human_duration, name

Object = dict[str, Any]
COLUMNS = (
    NAME,
    TableColumn("Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic."),
    TableColumn("Status", "string", "", "The aggregate status of the containers in this pod."),
    TableColumn("Restarts", "string", "", "The number of times the containers in this pod have been restarted and "
                                          "when the last container in this pod has restarted."),
    AGE,
    TableColumn("IP", "string", "", "podIP address allocated to the pod. Routable at least within the cluster. "
                                     "Empty if not yet allocated.", 1),
    TableColumn("Node", "string", "", "NodeName indicates in which node this pod is scheduled. If empty, this pod "
                                       "is a candidate for scheduling by the scheduler defined in schedulerName. Once "
                                       "this field is set, the kubelet for this node becomes responsible for the "
                                       "lifecycle of this pod. This field should not be used to express a desire for "
                                       "the pod to be scheduled on a specific node. https://kubernetes.io/docs/"
                                       "concepts/scheduling-eviction/assign-pod-node/#nodename", 1),
    TableColumn("Nominated Node", "string", "", "nominatedNodeName is set only when this pod preempts other pods on "
                                                 "the node, but it cannot be scheduled right away as preemption "
                                                 "victims receive their graceful termination periods. This field does "
                                                 "not guarantee that the pod will be scheduled on this node. Scheduler "
                                                 "may decide to place the pod elsewhere if other nodes become "
                                                 "available sooner. Scheduler may also decide to give the resources "
                                                 "on this node to a higher priority pod that is created after "
                                                 "preemption. As a result, this field may be different than "
                                                 "PodSpec.nodeName when the pod is scheduled.", 1),
    TableColumn("Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated for pod "
                                                  "readiness. A pod is ready when all its containers are ready AND "
                                                  "all conditions specified in the readiness gates have status equal "
                                                  'to "True" More info: https://git.k8s.io/enhancements/keps/'
                                                  "sig-network/580-pod-readiness-gates", 1),
)
ROW_CONDITIONS = {
    "Succeeded": [{"type": "Completed", "status": "True", "reason": "Succeeded",
                   "message": "The pod has completed successfully."}],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
}


def _since(stamp: str) -> str:
    when = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    return human_duration((wall_now() - when).total_seconds())


class Summary:
    """READY, STATUS and RESTARTS as printPod computes them."""

    def __init__(self, pod: Object):
        self.spec, self.status = pod.get("spec") or {}, pod.get("status") or {}
        self.meta = pod.get("metadata") or {}
        self.restarts, self.ready, self.last_restart = 0, 0, ""
        self.init = {c.get("name"): c for c in self.spec.get("initContainers") or []}
        self.total = len(self.spec.get("containers") or []) + sum(1 for c in self.init.values() if _sidecar(c))
        self.reason = self.status.get("reason") or self.status.get("phase") or ""
        if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
               for c in self.status.get("conditions") or []):
            self.reason = "SchedulingGated"
        initializing = self._init_containers()
        if not initializing or _condition_true(self.status, "Initialized"):
            self._containers()
        phase = self.status.get("phase")
        if self.meta.get("deletionTimestamp") and self.status.get("reason") == "NodeLost":
            self.reason = "Unknown"
        elif self.meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
            self.reason = "Terminating"

    def _count_restart(self, status: Object) -> None:
        self.restarts += status.get("restartCount") or 0
        finished = ((status.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""
        self.last_restart = max(self.last_restart, finished)

    def _init_containers(self) -> bool:
        sidecar_restarts, sidecar_last = 0, ""
        for i, status in enumerate(self.status.get("initContainerStatuses") or []):
            self._count_restart(status)
            sidecar = _sidecar(self.init.get(status.get("name")) or {})
            if sidecar:
                sidecar_restarts += status.get("restartCount") or 0
                finished = ((status.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""
                sidecar_last = max(sidecar_last, finished)
            state = status.get("state") or {}
            terminated, waiting = state.get("terminated"), state.get("waiting")
            if terminated is not None and terminated.get("exitCode", 0) == 0:
                continue
            if sidecar and status.get("started"):
                self.ready += 1 if status.get("ready") else 0
                continue
            if terminated is not None:
                self.reason = "Init:" + terminated["reason"] if terminated.get("reason") else (
                    f"Init:Signal:{terminated['signal']}" if terminated.get("signal")
                    else f"Init:ExitCode:{terminated.get('exitCode', 0)}")
            elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
                self.reason = "Init:" + waiting["reason"]
            else:
                self.reason = f"Init:{i}/{len(self.spec.get('initContainers') or [])}"
            self.sidecar = (sidecar_restarts, sidecar_last)
            return True
        self.sidecar = (sidecar_restarts, sidecar_last)
        return False

    def _containers(self) -> None:
        self.restarts, self.last_restart = self.sidecar
        running = False
        for status in reversed(self.status.get("containerStatuses") or []):
            self._count_restart(status)
            state = status.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                self.reason = waiting["reason"]
            elif terminated is not None and terminated.get("reason"):
                self.reason = terminated["reason"]
            elif terminated is not None:
                self.reason = f"Signal:{terminated['signal']}" if terminated.get("signal") else \
                    f"ExitCode:{terminated.get('exitCode', 0)}"
            elif status.get("ready") and state.get("running") is not None:
                running = True
                self.ready += 1
        if self.reason == "Completed" and running:
            self.reason = "Running" if _condition_true(self.status, "Ready") else "NotReady"

    def restarts_cell(self) -> str:
        if self.restarts and self.last_restart:
            return f"{self.restarts} ({_since(self.last_restart)} ago)"
        return str(self.restarts)


def _sidecar(container: Object) -> bool:
    return container.get("restartPolicy") == "Always"


def _condition_true(status: Object, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def _readiness_gates(pod: Object) -> str:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in reversed((pod.get("status") or {}).get("conditions") or [])}
    true = sum(1 for gate in gates if conditions.get(gate.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


def cells(pod: Object) -> list[Any]:
    summary = Summary(pod)
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    ips = status.get("podIPs") or []
    return [name(pod), f"{summary.ready}/{summary.total}", summary.reason, summary.restarts_cell(), age(pod),
            (ips[0].get("ip") if ips else "") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", _readiness_gates(pod)]


@dataclass(frozen=True)
class PodTableConvertor(TableConvertor):
    """Completed pods' rows carry a Completed condition (kubectl marks them)."""

    def row(self, obj: Object, include_object: str) -> dict[str, Any]:
        row = super().row(obj, include_object)
        conditions = ROW_CONDITIONS.get((obj.get("status") or {}).get("phase") or "")
        if conditions:
            row["conditions"] = conditions
        return row


TABLE = PodTableConvertor(COLUMNS, cells)
