"""The podgc controller against a real server (in-process), the test playing the kubelet (pods/status
patched to Succeeded or Failed): terminated pods beyond the threshold go oldest first; pods bound to a
node that does not exist are marked Failed with the DisruptionTarget condition (DeletionByPodGC) and
force-deleted; terminating pods never scheduled are marked Failed and force-deleted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.podgc import PodGCController

NS = "default"
HOLD = "example.com/hold"  # a finalizer keeping a deleted pod visible to the test


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, threshold: int) -> AsyncIterator[ControllerCluster]:
    def controllers(c: ControllerCluster) -> list:
        return [PodGCController(c.client, c.informers, threshold, gc_check_period=0.05, quarantine_time=0.0)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c


def _pods(client):  # noqa: ANN001, ANN202
    return client.resource("", "v1", "pods").namespace(NS)


async def _pod(c: ControllerCluster, name: str, node: str = "", finalizers: list | None = None) -> dict:
    meta: dict = {"name": name}
    if finalizers:
        meta["finalizers"] = finalizers
    spec: dict = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return await _pods(c.client).create({"metadata": meta, "spec": spec})


async def _terminate(c: ControllerCluster, name: str, phase: str, exit_code: int) -> None:
    state = {"terminated": {"exitCode": exit_code}}
    status = {
        "phase": phase,
        "containerStatuses": [
            {
                "name": "c",
                "image": "busybox",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": state,
            }
        ],
    }
    await _pods(c.client).patch(name, {"status": status}, subresource="status")


async def _names(c: ControllerCluster, expected: list[str]) -> bool:
    return sorted(p["metadata"]["name"] for p in (await _pods(c.client).list())["items"]) == expected


def test_terminated_pods_over_the_threshold_go_oldest_first(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path, threshold=2) as c:
            await c.client.resource("", "v1", "nodes").create({"metadata": {"name": "n1"}})
            for name in (
                "a",
                "b",
                "c",
                "d",
            ):  # created in one second: the older by name (upstream's tie-break)
                await _pod(c, name, node="n1")
            await _terminate(c, "a", "Succeeded", 0)
            await _terminate(c, "b", "Failed", 1)
            await asyncio.sleep(0.3)
            assert await _names(c, ["a", "b", "c", "d"])  # two terminated: at the threshold
            await _terminate(c, "d", "Succeeded", 0)
            await eventually(lambda: _names(c, ["b", "c", "d"]))

    asyncio.run(main())


def test_orphaned_and_unscheduled_terminating_pods(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path, threshold=100) as c:
            await _pod(c, "orphan", node="gone", finalizers=[HOLD])
            orphan = await eventually(lambda: _deleted(c, "orphan"))
            assert orphan["status"]["phase"] == "Failed"
            [condition] = [x for x in orphan["status"]["conditions"] if x["type"] == "DisruptionTarget"]
            assert (condition["status"], condition["reason"], condition["message"]) == (
                "True",
                "DeletionByPodGC",
                "PodGC: node no longer exists",
            )
            assert orphan["metadata"]["deletionGracePeriodSeconds"] == 0

            await _pod(c, "unscheduled", finalizers=[HOLD])
            await _pods(c.client).delete("unscheduled")
            pod = await eventually(lambda: _failed(c, "unscheduled"))
            assert not any(x["type"] == "DisruptionTarget" for x in pod["status"].get("conditions") or ())

    asyncio.run(main())


async def _deleted(c: ControllerCluster, name: str) -> dict | None:
    pod = await _pods(c.client).get(name)
    return pod if pod["metadata"].get("deletionTimestamp") else None


async def _failed(c: ControllerCluster, name: str) -> dict | None:
    pod = await _pods(c.client).get(name)
    return pod if pod["status"].get("phase") == "Failed" else None


def test_the_threshold_flag_reaches_the_controller_manager(tmp_path: Path) -> None:
    from kube_apiserver.cmd.options import ServerRunOptions

    opts = ServerRunOptions.parse(["--data-dir", str(tmp_path), "--terminated-pod-gc-threshold=7"])
    assert opts.terminated_pod_gc_threshold == 7
    assert opts.complete().terminated_pod_gc_threshold == 7
    assert ServerRunOptions.parse(["--data-dir", str(tmp_path)]).terminated_pod_gc_threshold == 12500


def test_terminating_pods_on_an_out_of_service_node(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path, threshold=100) as c:
            taint = {
                "key": "node.kubernetes.io/out-of-service",
                "value": "nodeshutdown",
                "effect": "NoExecute",
            }
            await c.client.resource("", "v1", "nodes").create(
                {"metadata": {"name": "down"}, "spec": {"taints": [taint]}}
            )
            await c.client.resource("", "v1", "nodes").create({"metadata": {"name": "up"}})
            for name, node in (("stuck", "down"), ("waiting", "up")):
                await _pod(c, name, node=node, finalizers=[HOLD])
                await _pods(c.client).delete(name)  # graceful: a kubelet would finish it
            await eventually(lambda: _failed(c, "stuck"))
            await asyncio.sleep(0.2)
            assert (await _pods(c.client).get("waiting"))["status"].get("phase") != "Failed"

    asyncio.run(main())


def test_evicted_pods_go_first() -> None:
    from kube_apiserver.controllers.podgc import _eviction_and_creation_order

    def pod(name: str, created: str, reason: str = "") -> dict:
        status = {"phase": "Failed", "reason": reason} if reason else {"phase": "Succeeded"}
        return {"metadata": {"name": name, "creationTimestamp": created}, "status": status}

    pods = [
        pod("old", "2026-01-01T00:00:00Z"),
        pod("evicted", "2026-02-01T00:00:00Z", "Evicted"),
        pod("b", "2026-01-15T00:00:00Z"),
        pod("a", "2026-01-15T00:00:00Z"),
    ]
    assert [p["metadata"]["name"] for p in sorted(pods, key=_eviction_and_creation_order)] == [
        "evicted",
        "old",
        "a",
        "b",
    ]
