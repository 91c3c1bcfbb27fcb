"""The whole scheduler against an in-process server: Nodes created through the API, pods bound through
pods/binding with the Scheduled event, the FailedScheduling event and PodScheduled condition with
upstream's message, and a pending pod scheduled once a node that fits appears."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from scheduler_fixtures import node, pod

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.scheduler import Scheduler
from kube_apiserver.scheduler.framework.plugins import NodeName

NS = "default"


@contextlib.asynccontextmanager
async def scheduling(tmp_path: Path) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [Scheduler(c.client, c.informers)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client


def _pods(client):  # noqa: ANN001, ANN202
    return client.resource("", "v1", "pods").namespace(NS)


async def _create_node(client, obj: dict) -> None:  # noqa: ANN001
    """A ready node: its status written and the not-ready taint admission put on it taken off, as the
    node lifecycle controller does once the kubelet reports Ready."""
    nodes = client.resource("", "v1", "nodes")
    created = await nodes.create({k: v for k, v in obj.items() if k != "status"})
    created["spec"]["taints"] = obj["spec"].get("taints") or []
    created = await nodes.update(created)
    created["status"] = obj["status"]
    await nodes.update_status(created)


async def _events(client, name: str, reason: str) -> list[dict]:  # noqa: ANN001
    items = (await client.resource("events.k8s.io", "v1", "events").namespace(NS).list())["items"]
    return [e for e in items if e.get("reason") == reason and e["regarding"].get("name") == name]


def _new_pod(name: str, **kwargs) -> dict:  # noqa: ANN003
    obj = pod(name, **kwargs)
    for key in ("uid",):
        obj["metadata"].pop(key)
    return obj


def test_pods_are_bound_with_the_scheduled_event(tmp_path: Path) -> None:
    async def main() -> None:
        async with scheduling(tmp_path) as client:
            await _create_node(client, node("n1", cpu="2"))
            await _create_node(client, node("n2", cpu="2"))
            for i in range(3):
                await _pods(client).create(_new_pod(f"p{i}", cpu="500m"))

            async def bound() -> list[dict]:
                items = (await _pods(client).list())["items"]
                return items if all(p["spec"].get("nodeName") for p in items) else []

            pods = await eventually(bound)
            assert {p["spec"]["nodeName"] for p in pods} <= {"n1", "n2"}
            scheduled = next(c for c in pods[0]["status"]["conditions"] if c["type"] == "PodScheduled")
            assert scheduled["status"] == "True"
            name, host = pods[0]["metadata"]["name"], pods[0]["spec"]["nodeName"]
            events = await eventually(lambda: _events(client, name, "Scheduled"))
            assert events[0]["note"] == f"Successfully assigned default/{name} to {host}"
            assert (events[0]["reportingController"], events[0]["action"]) == ("default-scheduler", "Binding")

    asyncio.run(main())


def test_unschedulable_pod_gets_the_condition_and_event_then_a_node_that_fits(tmp_path: Path) -> None:
    async def main() -> None:
        async with scheduling(tmp_path) as client:
            taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
            await _create_node(client, node("tainted", taints=[taint]))
            await _create_node(client, node("small1", cpu="1"))
            await _create_node(client, node("small2", cpu="1"))
            await _pods(client).create(_new_pod("big", cpu="2"))
            message = (
                "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
                "no new claims to deallocate, preemption: 0/3 nodes are available: "
                "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
            )

            async def condition() -> dict | None:
                got = await _pods(client).get("big")
                found = [c for c in got["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
                return found[0] if found and found[0].get("reason") == "Unschedulable" else None

            cond = await eventually(condition)
            assert (cond["status"], cond["message"]) == ("False", message)
            failed = await eventually(lambda: _events(client, "big", "FailedScheduling"))
            assert failed[0]["note"] == message
            assert (failed[0]["type"], failed[0]["action"]) == ("Warning", "Scheduling")
            await _create_node(client, node("large", cpu="4"))

            async def placed() -> str:
                return (await _pods(client).get("big"))["spec"].get("nodeName", "")

            assert await eventually(placed) == "large"

    asyncio.run(main())


def test_other_schedulers_pods_and_gated_pods_are_left_alone(tmp_path: Path) -> None:
    async def main() -> None:
        async with scheduling(tmp_path) as client:
            await _create_node(client, node("n1"))
            await _pods(client).create(_new_pod("mine"))
            other = _new_pod("theirs")
            other["spec"]["schedulerName"] = "my-scheduler"
            await _pods(client).create(other)
            await _pods(client).create(_new_pod("gated", schedulingGates=[{"name": "example.com/hold"}]))

            async def mine_bound() -> bool:
                return bool((await _pods(client).get("mine"))["spec"].get("nodeName"))

            await eventually(mine_bound)
            assert not (await _pods(client).get("theirs"))["spec"].get("nodeName")
            gated = await _pods(client).get("gated")
            assert not gated["spec"].get("nodeName")
            assert [c["reason"] for c in gated["status"]["conditions"] if c["type"] == "PodScheduled"] == [
                "SchedulingGated"
            ]
            await _pods(client).patch("gated", {"spec": {"schedulingGates": None}})

            async def gated_bound() -> bool:
                return bool((await _pods(client).get("gated"))["spec"].get("nodeName"))

            await eventually(gated_bound)

    asyncio.run(main())


def test_a_plugin_error_is_a_scheduler_error_on_the_pod_and_the_loop_goes_on(tmp_path: Path) -> None:
    class Broken(NodeName):
        def filter(self, state, pod, node):  # noqa: ANN001, ANN201
            if pod["metadata"]["name"] == "bad":
                raise KeyError("malformed")
            return super().filter(state, pod, node)

    def controllers(c: ControllerCluster) -> list:
        return [Scheduler(c.client, c.informers, plugins=[Broken()])]

    async def main() -> None:
        async with controller_cluster(str(tmp_path), controllers) as c:
            client = c.client
            await _create_node(client, node("n1"))
            await _pods(client).create(_new_pod("bad"))
            await _pods(client).create(_new_pod("good"))

            async def good_bound() -> bool:
                return bool((await _pods(client).get("good"))["spec"].get("nodeName"))

            await eventually(good_bound)

            async def bad_condition() -> list[dict]:
                got = await _pods(client).get("bad")
                return [
                    c for c in got["status"].get("conditions") or [] if c.get("reason") == "SchedulerError"
                ]

            cond = (await eventually(bad_condition))[0]
            assert cond["message"] == "running \"NodeName\" filter plugin: 'malformed'"

    asyncio.run(main())


def test_a_replicasets_pods_are_spread_over_the_nodes(tmp_path: Path) -> None:
    """The default topology spread (hostname, maxSkew 3, over the ReplicaSet's selector) breaks what
    would be ties on big nodes: 6 pods go 2, 2 and 2."""

    async def main() -> None:
        async with scheduling(tmp_path) as client:
            for name in ("n1", "n2", "n3"):
                await _create_node(client, node(name, cpu="64", memory="256Gi"))
            rs = (
                await client.resource("apps", "v1", "replicasets")
                .namespace(NS)
                .create(
                    {
                        "metadata": {"name": "web"},
                        "spec": {
                            "replicas": 0,
                            "selector": {"matchLabels": {"app": "web"}},
                            "template": {
                                "metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                            },
                        },
                    }
                )
            )
            owner = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web",
                "uid": rs["metadata"]["uid"],
                "controller": True,
            }
            for i in range(6):
                p = _new_pod(f"web-{i}", labels={"app": "web"})
                p["metadata"]["ownerReferences"] = [owner]
                await _pods(client).create(p)

            async def placements() -> list[str]:
                items = (await _pods(client).list())["items"]
                hosts = [p["spec"].get("nodeName") for p in items]
                return hosts if all(hosts) else []

            hosts = await eventually(placements)
            assert sorted(hosts.count(n) for n in ("n1", "n2", "n3")) == [2, 2, 2]

    asyncio.run(main())


def test_a_finished_pod_frees_its_node_for_a_pending_one(tmp_path: Path) -> None:
    async def main() -> None:
        async with scheduling(tmp_path) as client:
            await _create_node(client, node("n1", cpu="1"))
            await _pods(client).create(_new_pod("first", cpu="1"))

            async def host(name: str) -> str:
                return (await _pods(client).get(name))["spec"].get("nodeName", "")

            await eventually(lambda: host("first"))
            await _pods(client).create(_new_pod("second", cpu="1"))

            async def insufficient() -> bool:
                got = await _pods(client).get("second")
                return any(
                    "1 Insufficient cpu" in (c.get("message") or "")
                    for c in got["status"].get("conditions") or []
                )

            await eventually(insufficient)
            first = await _pods(client).get("first")
            first["status"]["phase"] = "Succeeded"
            await _pods(client).update_status(first)
            assert await eventually(lambda: host("second")) == "n1"

    asyncio.run(main())
