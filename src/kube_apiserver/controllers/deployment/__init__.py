"""The deployment controller, laid out as upstream's pkg/controller/deployment: controller.py (handlers,
sync dispatch), sync.py, rolling.py, recreate.py, rollback.py, progress.py and util.py."""

from .controller import COMPONENT, DeploymentController

__all__ = ["COMPONENT", "DeploymentController"]
