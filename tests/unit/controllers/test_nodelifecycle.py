"""The nodelifecycle and taint-eviction controllers against a real server (in-process): a node whose
heartbeats stop goes Unknown and is tainted unreachable, its pods go not Ready and those not tolerating the
taint are evicted; the taints go when it reports Ready again; with every node down nothing is evicted."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.nodelifecycle import NodeLifecycleController, TaintEvictionController
from kube_apiserver.kubelet.config import NodesConfiguration
from kube_apiserver.kubelet.simulator import NodeSimulator

NS = "default"


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, simulated_nodes: int, grace_period: float = 1.0) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [
            NodeLifecycleController(
                c.client,
                c.informers,
                c.recorder("node-controller"),
                grace_period=grace_period,
                monitor_period=0.1,
            ),
            TaintEvictionController(c.client, c.informers, c.recorder("taint-eviction-controller")),
            # the simulated node renews its lease every 0.5 s: well within the 1 s grace period
            NodeSimulator(
                c.client,
                c.informers,
                NodesConfiguration(simulated_nodes=simulated_nodes, lease_duration_seconds=2),
            ),
        ]

    async with controller_cluster(str(tmp_path), controllers) as c:
        await c.client.resource("", "v1", "namespaces").create({"metadata": {"name": "kube-node-lease"}})
        yield c.client


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


async def _report_ready(client, name: str, status: str = "True") -> None:  # noqa: ANN001
    """What a kubelet's status update would say: Ready (or not), heard from now."""
    now = _now()
    condition = {
        "type": "Ready",
        "status": status,
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }
    await client.resource("", "v1", "nodes").patch(
        name, {"status": {"conditions": [condition]}}, subresource="status"
    )


async def _node(client, name: str) -> dict:  # noqa: ANN001
    return await client.resource("", "v1", "nodes").get(name)


def _ready(node: dict) -> dict:
    return next(c for c in node["status"]["conditions"] if c["type"] == "Ready")


def _taints(node: dict) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in node.get("spec", {}).get("taints") or []}


def _pod(name: str, node: str, tolerations: list | None = None) -> dict:
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": _now()}
    return {
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "nginx"}],
            "tolerations": tolerations or [],
        },
        "status": {"phase": "Running", "conditions": [ready]},
    }


def test_a_silent_node_goes_unknown_is_tainted_and_its_pods_evicted(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path, simulated_nodes=1) as client:
            nodes, pods = client.resource("", "v1", "nodes"), client.resource("", "v1", "pods").namespace(NS)
            await nodes.create({"metadata": {"name": "silent"}})
            await _report_ready(client, "silent")
            forever = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]
            # DefaultTolerationSeconds admission gives a pod without them 300 s: this one asks for 1 s.
            briefly = [{**forever[0], "tolerationSeconds": 1}]
            for pod in (_pod("doomed", "silent", briefly), _pod("tolerant", "silent", forever)):
                created = await pods.create(pod)
                created["status"] = pod["status"]
                await pods.update_status(created)

            async def unknown() -> dict | None:
                node = await _node(client, "silent")
                return node if _ready(node)["status"] == "Unknown" else None

            node = await eventually(unknown)
            ready = _ready(node)
            assert (ready["reason"], ready["message"]) == (
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
            )

            async def tainted() -> dict | None:
                node = await _node(client, "silent")
                wanted = {
                    ("node.kubernetes.io/unreachable", "NoExecute"),
                    ("node.kubernetes.io/unreachable", "NoSchedule"),
                }
                return node if wanted <= _taints(node) else None

            node = await eventually(tainted)
            no_execute = next(t for t in node["spec"]["taints"] if t["effect"] == "NoExecute")
            assert "timeAdded" in no_execute

            async def evicted() -> dict | None:
                pod = await pods.get("doomed")
                return pod if pod["metadata"].get("deletionTimestamp") else None

            doomed = await eventually(evicted)
            disruption = next(c for c in doomed["status"]["conditions"] if c["type"] == "DisruptionTarget")
            assert disruption["reason"] == "DeletionByTaintManager"
            tolerant = await pods.get("tolerant")
            assert not tolerant["metadata"].get("deletionTimestamp")
            assert (
                next(c for c in tolerant["status"]["conditions"] if c["type"] == "Ready")["status"] == "False"
            )
            # The simulated node kept its heartbeat: untouched.
            assert _ready(await _node(client, "sim-node-0"))["status"] == "True"
            assert not _taints(await _node(client, "sim-node-0"))

            async def node_events() -> dict[str, str]:
                events = (await client.resource("", "v1", "events").namespace("default").list())["items"]
                found = {e["reason"]: e["message"] for e in events if e["involvedObject"]["name"] == "silent"}
                return found if {"RegisteredNode", "NodeNotReady"} <= found.keys() else {}

            events = await eventually(node_events)
            assert events["RegisteredNode"] == "Node silent event: Registered Node silent in Controller"
            assert events["NodeNotReady"] == "Node silent status is now: NodeNotReady"
            # The node reports again: its taints go.
            await _report_ready(client, "silent")

            async def untainted() -> bool:
                return not _taints(await _node(client, "silent"))

            await eventually(untainted)

    asyncio.run(main())


def test_with_every_node_down_nothing_is_evicted(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path, simulated_nodes=0) as client:
            nodes, pods = client.resource("", "v1", "nodes"), client.resource("", "v1", "pods").namespace(NS)
            await nodes.create({"metadata": {"name": "silent"}})
            await _report_ready(client, "silent")
            await pods.create(_pod("spared", "silent"))

            async def tainted_no_schedule() -> dict | None:
                node = await _node(client, "silent")
                return node if ("node.kubernetes.io/unreachable", "NoSchedule") in _taints(node) else None

            node = await eventually(tainted_no_schedule)
            assert _ready(node)["status"] == "Unknown"
            assert ("node.kubernetes.io/unreachable", "NoExecute") not in _taints(node)
            assert not (await pods.get("spared"))["metadata"].get("deletionTimestamp")

    asyncio.run(main())


def test_a_node_reporting_not_ready_is_tainted_not_ready_until_it_is_ready(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path, simulated_nodes=1, grace_period=300.0) as client:
            await client.resource("", "v1", "nodes").create({"metadata": {"name": "sick"}})
            await _report_ready(client, "sick", "False")
            wanted = {
                ("node.kubernetes.io/not-ready", "NoExecute"),
                ("node.kubernetes.io/not-ready", "NoSchedule"),
            }

            async def tainted() -> bool:
                return _taints(await _node(client, "sick")) == wanted

            await eventually(tainted)
            assert _ready(await _node(client, "sick"))["status"] == "False"  # not Unknown: it reports
            await _report_ready(client, "sick")

            async def untainted() -> bool:
                return not _taints(await _node(client, "sick"))

            await eventually(untainted)

    asyncio.run(main())
