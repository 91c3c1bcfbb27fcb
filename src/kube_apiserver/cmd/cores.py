"""The cores this process may run on, which --workers' default follows: the CPU affinity mask, bounded by a
cgroup v2 CPU quota rounded up to whole cores (the two inputs Go's runtime, as of Go 1.25, sizes GOMAXPROCS by)."""

from __future__ import annotations

import math
import os

CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"


def usable_cores(cpu_max: str = CGROUP_CPU_MAX) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    limit = cgroup_cpu_limit(cpu_max)  # 0 (none) or at least 1
    return min(cores, limit) if limit else cores


def cgroup_cpu_limit(path: str) -> int:
    """The cgroup's CPU quota in whole cores, rounded up; 0 when there is none (or no cgroup v2 to read)."""
    try:
        with open(path) as f:
            quota, period = f.read().split()[:2]
    except (OSError, ValueError):
        return 0
    if quota == "max":
        return 0
    try:
        return max(1, math.ceil(int(quota) / int(period)))
    except (ValueError, ZeroDivisionError):
        return 0
