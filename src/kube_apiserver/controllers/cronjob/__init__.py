"""The cronjob controller (pkg/controller/cronjob)."""

from .controller import COMPONENT, CronJobController

__all__ = ["COMPONENT", "CronJobController"]
