from kube_apiserver.cmd.options import ServerRunOptions, help_text
from kube_apiserver.controllers.names import (
    DEFAULT_CONTROLLERS,
    KNOWN_CONTROLLERS,
    enabled,
    unknown_controllers,
)


def test_kube_controller_manager_syntax():
    assert enabled(["*"], "garbagecollector") and enabled(["*"], "namespace")
    assert not enabled(["*", "-namespace"], "namespace")
    assert enabled(["namespace"], "namespace") and not enabled(["namespace"], "garbagecollector")
    assert not enabled([], "namespace")
    assert unknown_controllers(["*", "-namespace", "no-such-controller"]) == ["no-such-controller"]


def test_every_embedded_controller_is_on_by_default_and_listed_in_the_help():
    for name in DEFAULT_CONTROLLERS:
        assert enabled(["*"], name) and not enabled(["*", f"-{name}"], name) and not enabled([], name)
    text = " ".join(help_text(ServerRunOptions().flags(), 10_000).split())
    listed = text.split("All controllers: ")[1].split(" (")[0]
    assert listed.split(", ") == sorted(KNOWN_CONTROLLERS)  # kube-controller-manager lists the off ones too
    disabled = text.split("Disabled-by-default controllers: ")[1].split(". ")[0]
    assert disabled.split(", ") == sorted(KNOWN_CONTROLLERS - set(DEFAULT_CONTROLLERS)) == ["bootstrapsigner",
                                                                                          "tokencleaner"]
    for name in disabled.split(", "):
        assert not enabled(["*"], name) and enabled(["*", name], name)


def test_v1_34_canonical_names_are_aliases():
    assert unknown_controllers(["*", "-deployment-controller", "endpoints-controller"]) == []
    assert not enabled(["*", "-deployment-controller"], "deployment")
    assert enabled(["pod-garbage-collector-controller"], "podgc")
    assert unknown_controllers(["deployments-controller"]) == ["deployments-controller"]
