"""The embedded scheduler in the real server (with the housekeeping controllers only), driven by kubectl: Nodes
created from raw JSON (their status written through nodes/status and the not-ready taint admission
puts on them removed, as a kubelet and the node lifecycle controller would), pods bound to them, and
a pod whose nodeSelector no node has shown FailedScheduling in `kubectl describe pod` and
`kubectl get events` with kube-scheduler's message."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Server, wait_for, with_controllers

UNSATISFIABLE = (
    "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
    "no new claims to deallocate, preemption: 0/2 nodes are available: "
    "2 Preemption is not helpful for scheduling."
)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("scheduler")), [with_controllers("scheduler")]).start()
    yield server
    server.stop()


def _node(srv: Server, name: str, zone: str) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
    }
    srv.kubectl("create", "-f", "-", input_text=json.dumps(node))
    resources = {"cpu": "2", "memory": "4Gi", "pods": "110"}
    status = {"status": {"allocatable": resources, "capacity": resources}}
    srv.kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p", json.dumps(status))
    srv.kubectl("taint", "nodes", name, "node.kubernetes.io/not-ready:NoSchedule-")


def _pod(name: str, **spec: object) -> str:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
            **spec,
        },
    }
    return json.dumps(pod)


def _node_name(srv: Server, pod: str) -> str:
    return srv.kubectl("get", "pod", pod, "-o", "jsonpath={.spec.nodeName}").stdout


def test_pods_get_nodes_and_an_unschedulable_one_gets_failed_scheduling(
    srv: Server, kubectl_available: None
) -> None:
    _node(srv, "node-a", "z1")
    _node(srv, "node-b", "z2")
    for name in ("web-1", "web-2"):
        srv.kubectl("create", "-f", "-", input_text=_pod(name))
    srv.kubectl("create", "-f", "-", input_text=_pod("pinned", nodeSelector={"zone": "z2"}))
    for name in ("web-1", "web-2"):
        assert wait_for(lambda name=name: _node_name(srv, name)) in ("node-a", "node-b")
    assert wait_for(lambda: _node_name(srv, "pinned")) == "node-b"
    described = srv.kubectl("describe", "pod", "pinned").stdout
    assert "Successfully assigned default/pinned to node-b" in described
    assert "default-scheduler" in described

    srv.kubectl("create", "-f", "-", input_text=_pod("nowhere", nodeSelector={"zone": "z9"}))

    def failed() -> str:
        out = srv.kubectl("describe", "pod", "nowhere").stdout
        return out if "FailedScheduling" in out else ""

    described = wait_for(failed)
    assert UNSATISFIABLE in " ".join(described.split())
    events = srv.kubectl(
        "get", "events", "--field-selector", "involvedObject.name=nowhere", "-o", "json"
    ).stdout
    [event] = [e for e in json.loads(events)["items"] if e["reason"] == "FailedScheduling"]
    assert (event["type"], event["message"], event["reportingComponent"], event["action"]) == (
        "Warning",
        UNSATISFIABLE,
        "default-scheduler",
        "Scheduling",
    )
    condition = srv.kubectl(
        "get", "pod", "nowhere", "-o", "jsonpath={.status.conditions[?(@.type=='PodScheduled')].reason}"
    ).stdout
    assert condition == "Unschedulable"
    assert srv.kubectl("get", "pod", "nowhere", "-o", "jsonpath={.spec.nodeName}").stdout == ""

    srv.kubectl("label", "node", "node-a", "zone=z9", "--overwrite")  # a node that fits appears
    assert wait_for(lambda: _node_name(srv, "nowhere")) == "node-a"
