"""The horizontalpodautoscaling controller (pkg/controller/podautoscaler)."""

from .horizontal import HorizontalController

__all__ = ["HorizontalController"]
