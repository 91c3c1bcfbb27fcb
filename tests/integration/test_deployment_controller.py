"""The deployment controller in the real server, driven by kubectl (enabled with
the replicaset and deployment controllers only). No node runs the pods
yet, so a thread plays the kubelet: it marks every pod Running and Ready through pods/status. Then
`kubectl rollout status` finishes, `set image` rolls out a new ReplicaSet, `rollout undo` goes back to
the previous template, `rollout history` lists the revisions, `scale`, `rollout pause/resume/restart`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Server, playing_kubelet, wait_for, with_controllers


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("deploy")), [with_controllers("replicaset", "deployment")]).start()
    yield server
    server.stop()


@pytest.fixture
def kubelet(srv: Server) -> Iterator[None]:
    with playing_kubelet(srv):
        yield


def _sets(srv: Server) -> list[dict]:
    out = srv.kubectl("get", "rs", "-l", "app=web", "-o", "json").stdout
    items = json.loads(out)["items"]
    return sorted(
        items, key=lambda rs: int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"])
    )


def _rollout(srv: Server) -> None:
    proc = srv.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
    assert 'deployment "web" successfully rolled out' in proc.stdout


def _image(srv: Server) -> str:
    return srv.kubectl(
        "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"
    ).stdout


def _live_pods(srv: Server) -> list[dict]:
    items = json.loads(srv.kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def test_kubectl_rollouts(srv: Server, kubectl_available: None, kubelet: None) -> None:
    srv.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
    _rollout(srv)
    [first] = _sets(srv)
    assert first["spec"]["replicas"] == 3 and first["status"]["readyReplicas"] == 3

    srv.kubectl("set", "image", "deployment/web", "nginx=nginx:1.27")
    _rollout(srv)
    old, new = _sets(srv)
    assert old["metadata"]["name"] == first["metadata"]["name"] and old["spec"]["replicas"] == 0
    assert (
        new["spec"]["replicas"] == 3
        and new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    )
    history = srv.kubectl("rollout", "history", "deployment/web").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]

    srv.kubectl("rollout", "undo", "deployment/web")  # client-side: the template of revision 1 back
    _rollout(srv)
    assert _image(srv) == "nginx"
    back, current = _sets(srv)
    assert back["metadata"]["name"] == new["metadata"]["name"] and back["spec"]["replicas"] == 0
    assert current["metadata"]["name"] == first["metadata"]["name"] and current["spec"]["replicas"] == 3
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"

    srv.kubectl("scale", "deployment/web", "--replicas=5")
    _rollout(srv)
    wait_for(lambda: len(_live_pods(srv)) == 5)
    scaled_up = f"Scaled up replica set {first['metadata']['name']} from 3 to 5"
    events = wait_for(lambda: _events_once(srv, scaled_up))  # Events are written in the background
    assert {e["source"]["component"] for e in events} == {"deployment-controller"}


def _events_once(srv: Server, message: str) -> list[dict] | None:
    out = srv.kubectl(
        "get", "events", "--field-selector", "involvedObject.kind=Deployment", "-o", "json"
    ).stdout
    events = json.loads(out)["items"]
    # Past 10 similar Events the correlator writes "(combined from similar events): <message>", as client-go's.
    scaled = [e["message"] for e in events if e["reason"] == "ScalingReplicaSet"]
    return events if any(m.endswith(message) for m in scaled) else None


def test_kubectl_pause_resume_and_restart(srv: Server, kubectl_available: None, kubelet: None) -> None:
    _rollout(srv)
    before = len(_sets(srv))
    srv.kubectl("rollout", "pause", "deployment/web")
    srv.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")
    wait_for(
        lambda: (
            "DeploymentPaused"
            in srv.kubectl(
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.status.conditions[?(@.type=='Progressing')].reason}",
            ).stdout
        )
    )
    assert len(_sets(srv)) == before  # paused: no rollout
    srv.kubectl("rollout", "resume", "deployment/web")
    _rollout(srv)
    assert len(_sets(srv)) == before + 1
    srv.kubectl("rollout", "restart", "deployment/web")
    _rollout(srv)
    newest = _sets(srv)[-1]
    assert "kubectl.kubernetes.io/restartedAt" in newest["spec"]["template"]["metadata"]["annotations"]
    assert newest["spec"]["replicas"] == 5
