"""The daemonset controller against a real server (in-process, its loopback client), with Node objects
created directly; the test plays the scheduler (pods/binding to the node the pod's affinity names) and
the kubelet (pods/status Running and Ready). One pod per eligible node (node selector, taints, the
tolerations daemons get), node add/update/delete, status, rolling updates within maxUnavailable or with
maxSurge, OnDelete, failed pods replaced, revisions and Events."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually, mark_pod, repeating
from kube_apiserver.controllers.daemonset import COMPONENT, DaemonSetsController
from kube_apiserver.controllers.daemonset.util import target_node_name

NS = "default"


def _ds(**spec: object) -> dict:
    return {
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "nodeSelector": {"role": "worker"},
                    "containers": [{"name": "c", "image": "agent:1"}],
                },
            },
            **spec,
        },
    }


async def _add_node(client, name: str, labels: dict | None = None, taints: list | None = None) -> None:  # noqa: ANN001
    """A Node with those labels and taints. Admission (TaintNodesByCondition) gives a new node the
    not-ready NoSchedule taint, which daemons do not tolerate; the node lifecycle controller lifts it
    once the node is Ready: the test plays that part."""
    nodes = client.resource("", "v1", "nodes")
    await nodes.create(
        {"metadata": {"name": name, "labels": {"role": "worker"} if labels is None else labels}}
    )
    await nodes.patch(name, {"spec": {"taints": taints}})


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path) -> AsyncIterator[ControllerCluster]:
    def controllers(c: ControllerCluster) -> list:
        return [DaemonSetsController(c.client, c.informers, c.recorder(COMPONENT))]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c


def _pods_api(client):  # noqa: ANN001, ANN202
    return client.resource("", "v1", "pods").namespace(NS)


def _sets(client):  # noqa: ANN001, ANN202
    return client.resource("apps", "v1", "daemonsets").namespace(NS)


async def _live(client) -> list[dict]:  # noqa: ANN001
    pods = (await _pods_api(client).list())["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


async def _by_node(client) -> dict[str, list[dict]]:  # noqa: ANN001
    by_node: dict[str, list[dict]] = {}
    for pod in await _live(client):
        by_node.setdefault(target_node_name(pod) or "", []).append(pod)
    return by_node


async def _bind(client, pod: dict) -> None:  # noqa: ANN001
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod["metadata"]["name"]},
        "target": {"kind": "Node", "name": target_node_name(pod)},
    }
    await _pods_api(client).create(binding, subresource="binding", name=pod["metadata"]["name"])


@contextlib.asynccontextmanager
async def scheduler_and_kubelet(client) -> AsyncIterator[None]:  # noqa: ANN001
    """Binds each pending pod to the node its affinity names, then marks it Running and Ready; a pod
    being deleted is removed at once (its containers stopped)."""

    async def step() -> None:
        for pod in (await _pods_api(client).list())["items"]:
            with contextlib.suppress(Exception):
                if pod["metadata"].get("deletionTimestamp"):
                    await _pods_api(client).delete(pod["metadata"]["name"], {"gracePeriodSeconds": 0})
                elif not pod["spec"].get("nodeName"):
                    await _bind(client, pod)
                elif (pod.get("status") or {}).get("phase") not in ("Running", "Failed"):
                    await mark_pod(client, NS, pod["metadata"]["name"])

    async with repeating(step):
        yield


async def _status(client, **expected: object) -> dict | None:  # noqa: ANN001
    status = (await _sets(client).get("agent")).get("status") or {}
    return status if all(status.get(k, 0) == v for k, v in expected.items()) else None


async def _on_nodes(client, names: set[str]) -> dict | None:  # noqa: ANN001
    by_node = await _by_node(client)
    return by_node if set(by_node) == names and all(len(p) == 1 for p in by_node.values()) else None


def test_one_pod_per_eligible_node_and_node_changes(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            client = c.client
            nodes = client.resource("", "v1", "nodes")
            await _add_node(client, "n1")
            await _add_node(client, "n2")
            await _add_node(
                client, "tainted", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
            )
            await _add_node(client, "unlabelled", labels={})
            # Cordoned (unschedulable's taint) and unreachable: daemons tolerate both.
            await _add_node(
                client,
                "cordoned",
                taints=[
                    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
                ],
            )
            ds = await _sets(client).create(_ds())
            by_node = await eventually(lambda: _on_nodes(client, {"n1", "n2", "cordoned"}))
            pod = by_node["n1"][0]
            assert pod["metadata"]["generateName"] == "agent-"
            assert pod["metadata"]["ownerReferences"][0]["uid"] == ds["metadata"]["uid"]
            labels = pod["metadata"]["labels"]
            assert labels["pod-template-generation"] == "1" and labels["controller-revision-hash"]
            assert pod["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ] == {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            }
            keys = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
            assert ("node.kubernetes.io/unreachable", "NoExecute") in keys
            assert ("node.kubernetes.io/pid-pressure", "NoSchedule") in keys
            assert not pod["spec"].get("nodeName")  # the scheduler binds it
            status = await eventually(
                lambda: _status(client, desiredNumberScheduled=3, currentNumberScheduled=3)
            )
            assert status["numberUnavailable"] == 3 and status["updatedNumberScheduled"] == 3
            assert status["observedGeneration"] == 1
            revisions = (await client.resource("apps", "v1", "controllerrevisions").namespace(NS).list())[
                "items"
            ]
            assert [r["metadata"]["labels"]["controller-revision-hash"] for r in revisions] == [
                labels["controller-revision-hash"]
            ]
            assert revisions[0]["metadata"]["name"] == f"agent-{labels['controller-revision-hash']}"
            # A new eligible node gets a pod; a node that stops matching loses its pod.
            await _add_node(client, "n3")
            await eventually(lambda: _on_nodes(client, {"n1", "n2", "n3", "cordoned"}))
            await nodes.patch("n1", {"metadata": {"labels": {"role": None}}})
            await eventually(lambda: _on_nodes(client, {"n2", "n3", "cordoned"}))
            # An untolerated NoExecute taint evicts the daemon too.
            await nodes.patch("n3", {"spec": {"taints": [{"key": "x", "effect": "NoExecute"}]}})
            await eventually(lambda: _on_nodes(client, {"n2", "cordoned"}))
            # A node deleted: its pod, never scheduled, is deleted.
            await nodes.delete("cordoned")
            await eventually(lambda: _on_nodes(client, {"n2"}))
            await c.events.flush()
            reasons = {
                e["reason"] for e in (await client.resource("", "v1", "events").namespace(NS).list())["items"]
            }
            assert {"SuccessfulCreate", "SuccessfulDelete"} <= reasons

    asyncio.run(main())


def _images(by_node: dict) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for pods in by_node.values() for p in pods}


def test_rolling_update_within_max_unavailable_and_status(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c, scheduler_and_kubelet(c.client):
            client = c.client
            for name in ("n1", "n2", "n3"):
                await _add_node(client, name)
            await _sets(client).create(_ds())
            first = await eventually(
                lambda: _status(
                    client, numberReady=3, numberAvailable=3, numberUnavailable=0, desiredNumberScheduled=3
                )
            )
            assert first["updatedNumberScheduled"] == 3
            pods = await _live(client)
            assert all(p["spec"]["nodeName"] == target_node_name(p) for p in pods)  # bound where pinned
            patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "agent:2"}]}}}}
            await _sets(client).patch("agent", patch, "application/strategic-merge-patch+json")

            # Never more than one (maxUnavailable 1, the default) down at once.
            async def rolled() -> dict | None:
                by_node = await _by_node(client)
                assert sum(len(p) for p in by_node.values()) >= 2
                done = _images(by_node) == {"agent:2"} and len(by_node) == 3
                return await _status(client, updatedNumberScheduled=3, numberAvailable=3) if done else None

            status = await eventually(rolled)
            assert status["observedGeneration"] == 2
            revisions = (await client.resource("apps", "v1", "controllerrevisions").namespace(NS).list())[
                "items"
            ]
            assert sorted(r["revision"] for r in revisions) == [1, 2]
            labels = {p["metadata"]["labels"]["pod-template-generation"] for p in await _live(client)}
            assert labels == {"2"}

    asyncio.run(main())


def test_surge_on_delete_and_failed_pods(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            client = c.client
            for name in ("n1", "n2"):
                await _add_node(client, name)
            surge = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
            async with scheduler_and_kubelet(client):
                await _sets(client).create(_ds(updateStrategy=surge))
                await eventually(lambda: _status(client, numberAvailable=2))
                patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "agent:2"}]}}}}
                await _sets(client).patch("agent", patch, "application/strategic-merge-patch+json")

                # Surging: a new pod beside the old one, which goes once the new one is available.
                async def surged() -> dict | None:
                    by_node = await _by_node(client)
                    assert all(len(p) <= 2 for p in by_node.values())
                    return by_node if _images(by_node) == {"agent:2"} and len(by_node) == 2 else None

                await eventually(surged)
                await eventually(lambda: _status(client, updatedNumberScheduled=2, numberAvailable=2))
                await _sets(client).patch(
                    "agent", {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}
                )
                patch["spec"]["template"]["spec"]["containers"][0]["image"] = "agent:3"
                await _sets(client).patch("agent", patch, "application/strategic-merge-patch+json")
                await eventually(lambda: _status(client, observedGeneration=4, updatedNumberScheduled=0))
                assert _images(await _by_node(client)) == {"agent:2"}  # OnDelete: untouched
            # A failed daemon is deleted (FailedDaemonPod) and replaced, at the new template.
            failed = (await _by_node(client))["n1"][0]
            await mark_pod(client, NS, failed["metadata"]["name"], phase="Failed")
            replaced = await eventually(lambda: _replacement(client, failed["metadata"]["name"]))
            assert replaced["spec"]["containers"][0]["image"] == "agent:3"
            await c.events.flush()
            events = (await client.resource("", "v1", "events").namespace(NS).list())["items"]
            assert any(
                e["reason"] == "FailedDaemonPod"
                and e["message"]
                == f"Found failed daemon pod default/{failed['metadata']['name']} on node n1, will try to kill it"
                for e in events
            )

    asyncio.run(main())


async def _replacement(client, failed_name: str) -> dict | None:  # noqa: ANN001
    pods = (await _by_node(client)).get("n1") or []
    fresh = [p for p in pods if p["metadata"]["name"] != failed_name]
    gone = all(p["metadata"]["name"] != failed_name for p in pods)
    return fresh[0] if fresh and gone else None


def test_odd_revisions_and_pods_are_tolerated(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            client = c.client
            await _add_node(client, "n1")
            await _add_node(client, "n2")
            revisions = client.resource("apps", "v1", "controllerrevisions").namespace(NS)
            # An orphan revision of another shape: adopted, kept as history, the new one numbered after it.
            await revisions.create(
                {
                    "metadata": {"name": "agent-junk", "labels": {"app": "agent"}},
                    "data": {"spec": 1},
                    "revision": 7,
                }
            )
            # A matching pod pinned to no node: adopted, counted on no node.
            stray = {
                "metadata": {"name": "stray", "labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
            await _pods_api(client).create(stray)
            # The template names one node: only that one runs it.
            ds = _ds()
            ds["spec"]["template"]["spec"]["nodeName"] = "n2"
            await _sets(client).create(ds)
            await eventually(lambda: _status(client, desiredNumberScheduled=1, currentNumberScheduled=1))
            by_node = await _by_node(client)
            assert sorted(by_node) == ["", "n2"] and by_node[""][0]["metadata"]["name"] == "stray"
            items = {r["metadata"]["name"]: r for r in (await revisions.list())["items"]}
            assert items["agent-junk"]["metadata"]["ownerReferences"][0]["name"] == "agent"
            [current] = [r for name, r in items.items() if name != "agent-junk"]
            assert current["revision"] == 8

    asyncio.run(main())
