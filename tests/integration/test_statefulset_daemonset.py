"""The statefulset and daemonset controllers in the real server, driven by kubectl (enabled with
the statefulset and daemonset controllers only). The test plays the
kubelet: it marks pods Running and Ready through pods/status. A StatefulSet's pods appear one by one in
ordinal order, `kubectl rollout status`, `set image`, `rollout history` and `rollout undo` work on it; a
DaemonSet gets one pod per eligible Node."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Server, playing_kubelet, wait_for, with_controllers

STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
  serviceName: nginx
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("sts")), [with_controllers("statefulset", "daemonset")]).start()
    yield server
    server.stop()


NODES_AND_DAEMONSET = """
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Node
metadata:
  name: n2
---
apiVersion: v1
kind: Node
metadata:
  name: n3
spec:
  taints:
  - {key: dedicated, value: db, effect: NoSchedule}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: agent:1
"""


def _pods(srv: Server, selector: str) -> dict[str, dict]:
    items = json.loads(srv.kubectl("get", "pods", "-l", selector, "-o", "json").stdout)["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


def _mark_ready(srv: Server, name: str) -> None:
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    resp = srv.request(
        "PATCH",
        f"/api/v1/namespaces/default/pods/{name}/status",
        json.dumps({"status": status}),
        {"Content-Type": "application/merge-patch+json"},
    )
    assert resp.status == 200, resp.body


def _rollout(srv: Server) -> str:
    return srv.kubectl("rollout", "status", "statefulset/web", "--timeout=60s", timeout=90).stdout


def test_statefulset_pods_in_order_and_rollouts(srv: Server, kubectl_available: None) -> None:
    srv.kubectl("apply", "-f", "-", input_text=STATEFULSET)
    for ordinal in range(3):
        # Only the next ordinal appears, and only once its predecessor is Ready.
        pods = wait_for(lambda n=ordinal: (p := _pods(srv, "app=web")) and len(p) == n + 1 and p)
        assert sorted(pods) == [f"web-{i}" for i in range(ordinal + 1)]
        _mark_ready(srv, f"web-{ordinal}")
    # The server defaults rollingUpdate.partition to 0, so kubectl reports a partitioned rollout.
    assert "partitioned roll out complete: 3 new pods have been updated" in _rollout(srv)
    with playing_kubelet(srv):
        srv.kubectl("set", "image", "statefulset/web", "nginx=nginx:1.27")
        assert "partitioned roll out complete: 3 new pods have been updated" in _rollout(srv)
        images = {p["spec"]["containers"][0]["image"] for p in _pods(srv, "app=web").values()}
        assert images == {"nginx:1.27"}
        history = srv.kubectl("rollout", "history", "statefulset/web").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        srv.kubectl("rollout", "undo", "statefulset/web")
        _rollout(srv)
        wait_for(
            lambda: {p["spec"]["containers"][0]["image"] for p in _pods(srv, "app=web").values()} == {"nginx"}
        )
    events = json.loads(
        srv.kubectl(
            "get", "events", "--field-selector", "involvedObject.kind=StatefulSet", "-o", "json"
        ).stdout
    )["items"]
    assert {e["source"]["component"] for e in events} == {"statefulset-controller"}
    assert any(e["message"] == "create Pod web-0 in StatefulSet web successful" for e in events)


def test_daemonset_one_pod_per_eligible_node(srv: Server, kubectl_available: None) -> None:
    srv.kubectl("apply", "-f", "-", input_text=NODES_AND_DAEMONSET)
    # Admission gave each new node the not-ready NoSchedule taint, lifted by the node lifecycle
    # controller once the node is Ready: the test plays that part.
    srv.kubectl("taint", "nodes", "n1", "n2", "n3", "node.kubernetes.io/not-ready:NoSchedule-")
    pods = wait_for(lambda: (p := _pods(srv, "app=agent")) and len(p) == 2 and p)
    targets = sorted(
        p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchFields"][0]["values"][0]
        for p in pods.values()
    )
    assert targets == ["n1", "n2"]  # not n3: its taint is not tolerated
    with playing_kubelet(srv):
        assert 'daemon set "agent" successfully rolled out' in _ds_rollout(srv)
        status = json.loads(srv.kubectl("get", "daemonset", "agent", "-o", "json").stdout)["status"]
        assert status["desiredNumberScheduled"] == 2 and status["numberReady"] == 2
        srv.kubectl("set", "image", "daemonset/agent", "agent=agent:2")
        assert 'daemon set "agent" successfully rolled out' in _ds_rollout(srv)
        assert {p["spec"]["containers"][0]["image"] for p in _pods(srv, "app=agent").values()} == {"agent:2"}
        history = srv.kubectl("rollout", "history", "daemonset/agent").stdout
        assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
        srv.kubectl("rollout", "undo", "daemonset/agent")
        _ds_rollout(srv)
        wait_for(
            lambda: (
                {p["spec"]["containers"][0]["image"] for p in _pods(srv, "app=agent").values()} == {"agent:1"}
            )
        )


def _ds_rollout(srv: Server) -> str:
    return srv.kubectl("rollout", "status", "daemonset/agent", "--timeout=60s", timeout=90).stdout


CLAIMED = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  podManagementPolicy: Parallel
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: postgres
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


def _claims(srv: Server) -> list[str]:
    items = json.loads(srv.kubectl("get", "pvc", "-l", "app=db", "-o", "json").stdout)["items"]
    return sorted(c["metadata"]["name"] for c in items)


def test_claims_deleted_with_their_statefulset(srv: Server, kubectl_available: None) -> None:
    srv.kubectl("apply", "-f", "-", input_text=CLAIMED)
    assert wait_for(lambda: _claims(srv) == ["data-db-0", "data-db-1"])
    owners = json.loads(srv.kubectl("get", "pvc", "data-db-0", "-o", "json").stdout)["metadata"][
        "ownerReferences"
    ]
    assert [(o["kind"], o["name"]) for o in owners] == [("StatefulSet", "db")]
    srv.kubectl("delete", "statefulset", "db")
    # The garbage collector deletes what the StatefulSet owned: its pods, then (whenDeleted: Delete) its claims.
    wait_for(lambda: _claims(srv) == [] and not _pods(srv, "app=db"))
