"""The daemonset controller (pkg/controller/daemon)."""

from .controller import COMPONENT, DaemonSetsController

__all__ = ["COMPONENT", "DaemonSetsController"]
