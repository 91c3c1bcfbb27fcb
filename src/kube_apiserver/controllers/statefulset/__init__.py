"""The statefulset controller (pkg/controller/statefulset)."""

from .controller import COMPONENT, StatefulSetController

__all__ = ["COMPONENT", "StatefulSetController"]
