"""Simulated nodes in the real server (`--simulated-nodes 3 --controllers=*,node-simulator,...`), driven by
kubectl: three Ready nodes, a pod bound to one runs, and `kubectl logs` and `kubectl exec` (websocket,
v5.channel.k8s.io) answer for its container with a simulated message."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Server, wait_for

CONTROLLERS = "--controllers=*,node-simulator,nodelifecycle,taint-eviction-controller"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(
        str(tmp_path_factory.mktemp("simulated")), ["--simulated-nodes", "3", CONTROLLERS]
    ).start()
    yield server
    server.stop()


def _ready_nodes(srv: Server) -> list[str]:
    nodes = json.loads(srv.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    ready = []
    for node in nodes:
        conditions = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions") or []}
        if conditions.get("Ready") == "True" and not node.get("spec", {}).get("taints"):
            ready.append(node["metadata"]["name"])
    return sorted(ready) if len(ready) == 3 else []


def test_three_ready_nodes_run_a_pod_that_answers_logs_and_exec(srv: Server, kubectl_available: None) -> None:
    # Ready, and untainted: nodelifecycle took off the not-ready taint admission put on them at creation.
    assert wait_for(lambda: _ready_nodes(srv)) == ["sim-node-0", "sim-node-1", "sim-node-2"]
    table = srv.kubectl("get", "nodes").stdout
    assert table.count(" Ready ") == 3, table
    assert "v1.34.0" in table
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {"nodeName": "sim-node-1", "containers": [{"name": "c", "image": "nginx"}]},
    }
    srv.kubectl("create", "-f", "-", input_text=json.dumps(pod))

    def running() -> bool:
        return srv.kubectl("get", "pod", "web", "-o", "jsonpath={.status.phase}").stdout == "Running"

    wait_for(running)
    wide = srv.kubectl("get", "pod", "web", "-o", "wide").stdout
    assert "sim-node-1" in wide and "10.64.1.2" in wide, wide
    logs = srv.kubectl("logs", "web").stdout
    assert logs == "simulated container c of pod default/web on node sim-node-1: no real process runs\n"
    executed = srv.kubectl("exec", "web", "--", "ls", "-l", check=False)
    assert executed.returncode == 0, executed.stderr
    assert executed.stdout == (
        "simulated container c of pod default/web on node sim-node-1: no real process runs; "
        "the command 'ls -l' was not run\n"
    )
    attached = srv.kubectl("attach", "web", check=False)
    assert attached.returncode == 0, attached.stderr
    assert "there is nothing to attach to" in attached.stdout
    # A pod on a node that is not simulated is answered as before (this node reports no address).
    srv.kubectl(
        "create",
        "-f",
        "-",
        input_text=json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "real"}}),
    )
    elsewhere = dict(pod, metadata={"name": "elsewhere"}, spec=dict(pod["spec"], nodeName="real"))
    srv.kubectl("create", "-f", "-", input_text=json.dumps(elsewhere))
    refused = srv.kubectl("logs", "elsewhere", check=False)
    assert refused.returncode != 0 and "no preferred addresses found" in refused.stderr


def test_a_deployment_on_simulated_nodes_becomes_available(
    tmp_path_factory: pytest.TempPathFactory, kubectl_available: None
) -> None:
    """With the scheduler and the workload controllers: the pods are scheduled onto the simulated nodes
    (untainted by nodelifecycle), run there and become ready, so the Deployment becomes available."""
    controllers = f"{CONTROLLERS},scheduler,replicaset,deployment"
    server = Server(str(tmp_path_factory.mktemp("cluster")), ["--simulated-nodes", "3", controllers]).start()
    try:
        server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=4")

        def available() -> bool:
            jsonpath = "jsonpath={.status.availableReplicas}"
            return server.kubectl("get", "deployment", "web", "-o", jsonpath).stdout == "4"

        wait_for(available)
        pods = json.loads(server.kubectl("get", "pods", "-o", "json").stdout)["items"]
        assert {p["spec"]["nodeName"] for p in pods} <= {"sim-node-0", "sim-node-1", "sim-node-2"}
        assert all(p["status"]["phase"] == "Running" for p in pods)
    finally:
        server.stop()
