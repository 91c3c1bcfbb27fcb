"""kube-controller-manager's HPAControllerConfiguration: the flags of the horizontalpodautoscaling
controller."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SYNC_PERIOD = 15.0
DEFAULT_TOLERANCE = 0.1
DEFAULT_DOWNSCALE_STABILIZATION = 300.0
DEFAULT_CPU_INITIALIZATION_PERIOD = 300.0
DEFAULT_INITIAL_READINESS_DELAY = 30.0


@dataclass
class HPAControllerConfiguration:
    sync_period: float = DEFAULT_SYNC_PERIOD
    tolerance: float = DEFAULT_TOLERANCE
    downscale_stabilization: float = DEFAULT_DOWNSCALE_STABILIZATION
    cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD
    initial_readiness_delay: float = DEFAULT_INITIAL_READINESS_DELAY

    def validate(self) -> list[str]:
        errs = []
        if self.sync_period <= 0:
            errs.append("--horizontal-pod-autoscaler-sync-period must be positive")
        if self.tolerance < 0:
            errs.append("--horizontal-pod-autoscaler-tolerance must not be negative")
        return errs
