"""The scheduler is the controller manager's opt-in controller "scheduler" (kube-scheduler's users turn
it off with -scheduler once it is on by default)."""

from kube_apiserver.controllers.manager import enabled, unknown_controllers


def test_scheduler_is_an_opt_in_controller() -> None:
    assert not enabled(["*"], "scheduler")
    assert enabled(["*", "scheduler"], "scheduler")
    assert not enabled(["*", "scheduler", "-scheduler"], "scheduler")
    assert unknown_controllers(["*", "scheduler", "-scheduler"]) == []
