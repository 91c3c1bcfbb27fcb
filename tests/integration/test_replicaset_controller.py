"""The replicaset and replicationcontroller controllers in the real server, driven by kubectl: enabled with
the replicaset and replicationcontroller controllers only, a
ReplicaSet gets its pods, `kubectl scale` takes them down, and the garbage collector removes them with it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Server, wait_for, with_controllers

MANIFEST = """
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
spec:
  replicas: 3
  selector:
    matchLabels: {tier: frontend}
  template:
    metadata:
      labels: {tier: frontend}
    spec:
      containers:
      - name: php
        image: php:8
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("rsc")),
                    [with_controllers("replicaset", "replicationcontroller")]).start()
    yield server
    server.stop()


def _pods(srv: Server, selector: str) -> list[dict]:
    out = srv.kubectl("get", "pods", "-l", selector, "-o", "json").stdout
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def test_kubectl_replicaset_lifecycle(srv: Server, kubectl_available: None, tmp_path) -> None:  # noqa: ANN001
    manifest = tmp_path / "rs.yaml"
    manifest.write_text(MANIFEST)
    srv.kubectl("apply", "-f", str(manifest))
    wait_for(lambda: len(_pods(srv, "tier=frontend")) == 3)
    wait_for(lambda: "3" in srv.kubectl("get", "rs", "frontend", "-o", "jsonpath={.status.replicas}").stdout)
    srv.kubectl("scale", "rs/frontend", "--replicas=1")
    wait_for(lambda: len(_pods(srv, "tier=frontend")) == 1)
    events = srv.kubectl("get", "events", "--field-selector", "involvedObject.name=frontend", "-o", "json").stdout
    reasons = sorted({e["reason"] for e in json.loads(events)["items"]})
    assert reasons == ["SuccessfulCreate", "SuccessfulDelete"]
    srv.kubectl("delete", "rs", "frontend", "--wait=true")
    wait_for(lambda: _pods(srv, "tier=frontend") == [])


def test_a_replication_controller_keeps_its_replicas(srv: Server, kubectl_available: None) -> None:
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "legacy"},
          "spec": {"replicas": 2, "selector": {"app": "legacy"},
                   "template": {"metadata": {"labels": {"app": "legacy"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert srv.request("POST", "/api/v1/namespaces/default/replicationcontrollers", rc).status == 201
    wait_for(lambda: len(_pods(srv, "app=legacy")) == 2)
    victim = _pods(srv, "app=legacy")[0]["metadata"]["name"]
    srv.kubectl("delete", "pod", victim, "--wait=false")
    wait_for(lambda: len(_pods(srv, "app=legacy")) == 2 and victim not in
             [p["metadata"]["name"] for p in _pods(srv, "app=legacy")])
