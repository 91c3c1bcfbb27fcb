"""The flags of the simulated nodes and of the controller that watches nodes' heartbeats."""

from __future__ import annotations

from dataclasses import dataclass

# Our annotations a pod may carry to steer its simulated containers.
ANNOTATION_PREFIX = "simulated.kube-apiserver.io/"
RUN_SECONDS_ANNOTATION = ANNOTATION_PREFIX + "run-seconds"  # how long each container runs before it exits
EXIT_CODE_ANNOTATION = ANNOTATION_PREFIX + "exit-code"  # what the containers exit with (default 0)
TERMINATION_SECONDS_ANNOTATION = ANNOTATION_PREFIX + "termination-seconds"  # SIGTERM to exit (default 0)
MAX_SIMULATED_NODES = 4096  # their addresses are numbered within this (nodes.py)


@dataclass
class NodesConfiguration:
    """`simulated_nodes`: how many sim-node-<i> to run. `pod_run_seconds`: how long the containers of a pod
    that does not restart them (restartPolicy Never or OnFailure: Jobs' pods) run before exiting 0.
    `node_monitor_grace_period`: kube-controller-manager's --node-monitor-grace-period (v1.32 raised its
    default from 40 s to 50 s)."""

    simulated_nodes: int = 0
    pod_run_seconds: float = 1.0
    lease_duration_seconds: int = 40  # kubelet's nodeLeaseDurationSeconds; renewed every quarter of it
    status_report_seconds: float = 60.0  # a status write when nothing changed (kubelet: 5 min)
    node_monitor_grace_period: float = 50.0

    def validate(self) -> list[str]:
        problems = []
        if not 0 <= self.simulated_nodes <= MAX_SIMULATED_NODES:
            problems.append(f"--simulated-nodes must be between 0 and {MAX_SIMULATED_NODES}")
        if self.pod_run_seconds < 0:
            problems.append("--simulated-pod-run-duration must not be negative")
        if self.node_monitor_grace_period <= 0:
            problems.append("--node-monitor-grace-period must be greater than 0")
        return problems
