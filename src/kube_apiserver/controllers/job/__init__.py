"""The job controller (pkg/controller/job)."""

from .controller import COMPONENT, JOB_TRACKING_FINALIZER, JobController

__all__ = ["COMPONENT", "JOB_TRACKING_FINALIZER", "JobController"]
