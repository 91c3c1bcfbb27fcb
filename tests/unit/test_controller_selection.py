from kube_apiserver.controllers.manager import enabled, unknown_controllers


def test_kube_controller_manager_syntax():
    assert enabled(["*"], "garbagecollector") and enabled(["*"], "namespace")
    assert not enabled(["*", "-namespace"], "namespace")
    assert enabled(["namespace"], "namespace") and not enabled(["namespace"], "garbagecollector")
    assert not enabled([], "namespace")
    assert unknown_controllers(["*", "-namespace", "no-such-controller"]) == ["no-such-controller"]


def test_the_workload_controllers_are_known_and_opt_in_for_now():
    assert unknown_controllers(["replicaset", "-replicationcontroller"]) == []
    assert not enabled(["*"], "replicaset")
    assert enabled(["*", "replicaset"], "replicaset") and enabled(["*", "replicaset"], "namespace")
