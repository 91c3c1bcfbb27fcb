"""The pytest plugin's configuration (options, ini, marks), its CRD file reading and its templates, without
starting a server; and its cost to a pytest run that does not use it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kube_apiserver.testing import crds
from kube_apiserver.testing.pytest_plugin import ServerSeeds, ServerSettings, settings_from_options
from kube_apiserver.testing.server import Response

pytest_plugins = ["pytester"]


def crd(name: str) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
    }


def test_marks_from_farthest_to_closest(tmp_path: Path) -> None:
    base = ServerSettings(args=("--v=2",), crds=("/base",), controllers=("namespace",))
    module = pytest.mark.kube_apiserver(crds="crds", controllers=["garbagecollector"], args=["--a"]).mark
    test = pytest.mark.kube_apiserver(crds=["more", "/abs"], controllers=[], authorization_mode="RBAC").mark
    settings = base.with_mark(module, tmp_path).with_mark(test, tmp_path)
    assert settings.crds == ("/base", str(tmp_path / "crds"), str(tmp_path / "more"), "/abs")
    assert settings.command_args() == ["--v=2", "--a", "--authorization-mode=RBAC", "--controllers="]


def test_the_deterministic_mark_adds_the_flags_and_a_closer_mark_turns_it_off(tmp_path: Path) -> None:
    on = ServerSettings().with_mark(pytest.mark.kube_apiserver(deterministic=True).mark, tmp_path)
    assert on.command_args() == ["--deterministic", "--deterministic-seed=0"]
    seeded = on.with_mark(pytest.mark.kube_apiserver(deterministic=7).mark, tmp_path)
    assert seeded.command_args() == ["--deterministic", "--deterministic-seed=7"]
    off = seeded.with_mark(pytest.mark.kube_apiserver(deterministic=False).mark, tmp_path)
    assert off.command_args() == []


def test_mark_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(pytest.UsageError, match="unknown argument"):
        ServerSettings().with_mark(pytest.mark.kube_apiserver(crd="x").mark, tmp_path)
    with pytest.raises(pytest.UsageError, match="keyword arguments only"):
        ServerSettings().with_mark(pytest.mark.kube_apiserver("crds").mark, tmp_path)
    with pytest.raises(pytest.UsageError, match="mode"):
        ServerSettings().with_mark(pytest.mark.kube_apiserver(mode="vm").mark, tmp_path)


def test_options_win_over_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nkube_apiserver_crds = crds\nkube_apiserver_controllers = namespace\n"
        "kube_apiserver_authorization_mode = RBAC\nkube_apiserver_args = --v=2\n"
    )
    settings = settings_from_options(pytester.parseconfig())
    assert settings.crds == (str(pytester.path / "crds"),)
    assert settings.command_args() == ["--v=2", "--authorization-mode=RBAC", "--controllers=namespace"]
    config = pytester.parseconfig(
        "--kube-apiserver-controllers=",
        "--kube-apiserver-arg=--v=4",
        "--kube-apiserver-admission-plugins=AlwaysPullImages",
        "--kube-apiserver-disable-admission-plugins=ServiceAccount,PodSecurity",
        "--kube-apiserver-crds=other",
        "--kube-apiserver-mode=subprocess",
    )
    settings = settings_from_options(config)
    assert settings.crds == (str(pytester.path / "other"),) and settings.mode == "subprocess"
    assert settings.command_args() == [
        "--v=2",
        "--v=4",
        "--enable-admission-plugins=AlwaysPullImages",
        "--disable-admission-plugins=ServiceAccount,PodSecurity",
        "--authorization-mode=RBAC",
        "--controllers=",
    ]


def test_templates_are_shared_by_command_lines_that_bootstrap_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[list[str]] = []
    monkeypatch.setattr(
        "kube_apiserver.testing.server.Template.create",
        lambda args, directory: made.append(args) or directory,
    )
    monkeypatch.setattr("kube_apiserver.testing.server.PKI.create", lambda directory: directory)
    seeds = ServerSeeds(tmp_path)
    first = seeds.server(ServerSettings(controllers=("namespace",)))
    again = seeds.server(
        ServerSettings(authorization_mode=("RBAC",), admission_plugins=("AlwaysPullImages",))
    )
    other = seeds.server(ServerSettings(args=("--service-cluster-ip-range=10.96.0.0/12",)))
    on_etcd = seeds.server(ServerSettings(args=("--storage-backend=etcd3", "--etcd-servers=http://e:2379")))
    assert made == [["--controllers="], ["--service-cluster-ip-range=10.96.0.0/12", "--controllers="]]
    assert first.template == again.template != other.template
    assert on_etcd.template is None and on_etcd.pki is not None


def test_crd_files_documents_and_lists(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(
        "---\n" + json.dumps(crd("b1.example.com")) + "\n---\nkind: ConfigMap\nmetadata: {name: skipped}\n"
    )
    listed = {"kind": "List", "items": [crd("a1.example.com"), {"kind": "Secret"}, crd("a2.example.com")]}
    (tmp_path / "a.json").write_text(json.dumps(listed))
    (tmp_path / "notes.txt").write_text("not: a manifest")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "c.yaml").write_text(json.dumps(crd("c.example.com")))
    names = [c["metadata"]["name"] for c in crds.read_crds(tmp_path)]
    assert names == ["a1.example.com", "a2.example.com", "b1.example.com"]
    assert [c["metadata"]["name"] for c in crds.read_crds(tmp_path / "nested" / "c.yaml")] == [
        "c.example.com"
    ]


def test_crd_files_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(crds.CRDInstallError, match="does not exist"):
        crds.read_crds(tmp_path / "missing")
    (tmp_path / "bad.yaml").write_text("a: [")
    with pytest.raises(crds.CRDInstallError, match="bad.yaml"):
        crds.read_crds(tmp_path)
    (tmp_path / "bad.yaml").write_text(json.dumps({"kind": "CustomResourceDefinition", "metadata": {}}))
    with pytest.raises(crds.CRDInstallError, match="without metadata.name"):
        crds.read_crds(tmp_path)


def test_loading_the_plugin_loads_no_server() -> None:
    # what pytest does for every run once the package is installed: the server's modules stay unloaded
    code = (
        "import sys, kube_apiserver.testing.pytest_plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith('kube_apiserver.') and 'pytest_plugin' not in m))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['kube_apiserver.testing']"


class FakeServer:
    """Answers the CRD calls: the apply with `apply_status`, then the CRD Established from the second look."""

    def __init__(self, apply_status: int = 201):
        self.apply_status = apply_status
        self.looks = 0
        self.calls: list[tuple[str, str]] = []

    def request(self, method: str, path: str, body=None, headers=None) -> Response:
        self.calls.append((method, path))
        if method == "PATCH":
            answer = {"message": "is invalid"} if self.apply_status >= 400 else json.loads(body)
            return Response(self.apply_status, {}, json.dumps(answer).encode())
        if path.startswith(crds.CRDS_PATH):
            self.looks += 1
            established = {"type": "Established", "status": "True" if self.looks > 1 else "False"}
            served = {**widget_crd(), "status": {"conditions": [established]}}
            return Response(200, {}, json.dumps(served).encode())
        return Response(200, {}, json.dumps({"resources": [{"name": "widgets"}]}).encode())


def widget_crd() -> dict:
    spec = {
        "group": "example.com",
        "names": {"plural": "widgets"},
        "versions": [{"name": "v1", "served": True}],
    }
    return {**crd("widgets.example.com"), "spec": spec}


def test_apply_crds_waits_until_established_and_discovered() -> None:
    server = FakeServer()
    crds.apply_crds(server, [widget_crd()])
    assert server.looks == 2 and server.calls[-1] == ("GET", "/apis/example.com/v1")
    assert "fieldManager=kube-apiserver-testing&force=true" in server.calls[0][1]  # server-side apply
    with pytest.raises(crds.CRDInstallError, match="'widgets.example.com' was refused: 422 is invalid"):
        crds.apply_crds(FakeServer(apply_status=422), [widget_crd()])
