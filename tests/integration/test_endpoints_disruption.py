"""The endpoint, endpointslice and disruption controllers in the real server, driven by kubectl (enabled
with --controllers until they are on by default). A thread plays the scheduler and the kubelets: it binds
each pending pod to a schedulable node, gives it an IP and marks it Running and Ready, and removes pods
being deleted. Then `kubectl expose` of a Deployment gets Endpoints and EndpointSlices, and `kubectl
drain` evicts a node's pods no faster than their PodDisruptionBudget allows."""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Iterator

import pytest

from conftest import Server, repeating, wait_for, with_controllers

CONTROLLERS = with_controllers("replicaset", "deployment", "endpoint", "endpointslice", "disruption")
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("endpoints")), [CONTROLLERS]).start()
    for name, zone in (("node-a", "zone-1"), ("node-b", "zone-2")):
        body = {"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}}}
        assert server.request("POST", "/api/v1/nodes", json.dumps(body)).status == 201
    yield server
    server.stop()


def _json(srv: Server, method: str, path: str, body: dict) -> int:
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else None
    return srv.request(method, path, json.dumps(body), headers).status


def _schedulable_node(srv: Server) -> str | None:
    nodes = srv.request("GET", "/api/v1/nodes").json()["items"]
    return next((n["metadata"]["name"] for n in nodes if not n.get("spec", {}).get("unschedulable")), None)


@contextlib.contextmanager
def playing_nodes(srv: Server) -> Iterator[None]:
    addresses = (f"10.244.{i // 250}.{i % 250 + 1}" for i in itertools.count())

    def step() -> None:
        resp = srv.request("GET", PODS)
        for pod in resp.json()["items"] if resp.status == 200 else ():
            name, spec = pod["metadata"]["name"], pod.get("spec", {})
            if pod["metadata"].get("deletionTimestamp"):
                srv.request("DELETE", f"{PODS}/{name}?gracePeriodSeconds=0")
            elif not spec.get("nodeName"):
                node = _schedulable_node(srv)
                target = {"apiVersion": "v1", "kind": "Node", "name": node}
                binding = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name},
                    "target": target,
                }
                if node:
                    _json(srv, "POST", f"{PODS}/{name}/binding", binding)
            elif not pod.get("status", {}).get("podIP"):
                ip = next(addresses)
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                status = {
                    "phase": "Running",
                    "podIP": ip,
                    "podIPs": [{"ip": ip}],
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
                }
                _json(srv, "PATCH", f"{PODS}/{name}/status", {"status": status})

    with repeating(step):
        yield


def _slices(srv: Server, service: str) -> list[dict]:
    out = srv.kubectl(
        "get", "endpointslices", "-l", f"kubernetes.io/service-name={service}", "-o", "json"
    ).stdout
    return json.loads(out)["items"]


def _ready_endpoints(srv: Server, service: str) -> list[dict]:
    return [
        e for s in _slices(srv, service) for e in s.get("endpoints") or () if e["conditions"].get("ready")
    ]


def test_kubectl_expose_gets_endpoints_and_slices(srv: Server, kubectl_available: None) -> None:
    with playing_nodes(srv):
        srv.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=8080")
        srv.kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080")
        endpoints = wait_for(lambda: len(_ready_endpoints(srv, "web")) == 2 and _ready_endpoints(srv, "web"))
        [endpoint_slice] = _slices(srv, "web")
        assert endpoint_slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == (
            "endpointslice-controller.k8s.io"
        )
        assert endpoint_slice["ports"] == [{"name": "", "port": 8080, "protocol": "TCP"}]
        assert all(e["zone"] in ("zone-1", "zone-2") and e["targetRef"]["kind"] == "Pod" for e in endpoints)

        def listed() -> dict | None:
            ep = json.loads(srv.kubectl("get", "endpoints", "web", "-o", "json", check=False).stdout or "{}")
            subsets = ep.get("subsets") or [{}]
            return ep if len(subsets[0].get("addresses") or ()) == 2 else None

        ep = wait_for(listed)
        assert ep["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
        assert sorted(a["ip"] for a in ep["subsets"][0]["addresses"]) == sorted(
            e["addresses"][0] for e in endpoints
        )

        srv.kubectl("delete", "service", "web")
        wait_for(lambda: srv.kubectl("get", "endpoints", "web", check=False).returncode != 0)
        wait_for(lambda: not _slices(srv, "web"))  # the garbage collector: their owner is gone
        srv.kubectl("delete", "deployment", "web")


def test_kubectl_drain_respects_a_pod_disruption_budget(srv: Server, kubectl_available: None) -> None:
    with playing_nodes(srv):
        srv.kubectl("create", "deployment", "db", "--image=nginx", "--replicas=2")
        srv.kubectl("create", "poddisruptionbudget", "db", "--selector=app=db", "--min-available=1")

        def status() -> dict:
            return json.loads(srv.kubectl("get", "pdb", "db", "-o", "json").stdout).get("status") or {}

        wait_for(lambda: status().get("currentHealthy") == 2 and status().get("disruptionsAllowed") == 1)
        on_a = [
            p
            for p in json.loads(srv.kubectl("get", "pods", "-l", "app=db", "-o", "json").stdout)["items"]
            if p["spec"].get("nodeName") == "node-a"
        ]
        assert len(on_a) == 2  # the first schedulable node took both
        proc = srv.kubectl("drain", "node-a", "--ignore-daemonsets", "--timeout=60s", timeout=90)
        assert "node/node-a drained" in proc.stdout
        # The second eviction waited for the first pod's replacement to be Ready on node-b.
        assert "Cannot evict pod as it would violate the pod's disruption budget." in proc.stderr
        pods = json.loads(srv.kubectl("get", "pods", "-l", "app=db", "-o", "json").stdout)["items"]
        assert {p["spec"]["nodeName"] for p in pods if not p["metadata"].get("deletionTimestamp")} == {
            "node-b"
        }
        wait_for(lambda: status().get("currentHealthy") == 2)
