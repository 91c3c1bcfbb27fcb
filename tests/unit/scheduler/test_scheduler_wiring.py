"""The scheduler is the controller manager's controller "scheduler", on by default; kube-scheduler's users
turn it off with -scheduler."""

from kube_apiserver.controllers.names import enabled, unknown_controllers


def test_scheduler_is_on_by_default_and_can_be_turned_off() -> None:
    assert enabled(["*"], "scheduler")
    assert not enabled(["*", "-scheduler"], "scheduler")
    assert unknown_controllers(["*", "scheduler", "-scheduler"]) == []
