"""The embedded kube-scheduler (pkg/scheduler): pods of the default scheduler without a node are
filtered and scored against the nodes and bound through pods/binding; see scheduler.py for the loop,
queue.py for the scheduling queue, cache.py for what each node holds, framework/ for the plugins."""

from .scheduler import DEFAULT_SCHEDULER_NAME, Scheduler

__all__ = ["DEFAULT_SCHEDULER_NAME", "Scheduler"]
