from kube_apiserver.controllers.manager import enabled, unknown_controllers


def test_kube_controller_manager_syntax():
    assert enabled(["*"], "garbagecollector") and enabled(["*"], "namespace")
    assert not enabled(["*", "-namespace"], "namespace")
    assert enabled(["namespace"], "namespace") and not enabled(["namespace"], "garbagecollector")
    assert not enabled([], "namespace")
    assert unknown_controllers(["*", "-namespace", "replicaset"]) == ["replicaset"]
