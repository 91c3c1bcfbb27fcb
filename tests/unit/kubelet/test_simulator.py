"""The node-simulator against a real server (in-process, its loopback client): simulated nodes register
and heartbeat (Lease renewals, Ready conditions), and the pods bound to them go through kubelet's
lifecycle: ContainerCreating to Running and Ready, Jobs' pods to Succeeded, failing pods to Failed,
deleted pods gone after their containers stopped."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.apimachinery import errors
from kube_apiserver.kubelet.config import EXIT_CODE_ANNOTATION, NodesConfiguration
from kube_apiserver.kubelet.simulator import NodeSimulator

NS = "default"


@contextlib.asynccontextmanager
async def simulated(tmp_path: Path, clock=time.time, **config: object) -> AsyncIterator:  # noqa: ANN001
    settings = NodesConfiguration(**{"simulated_nodes": 2, "pod_run_seconds": 0.0, **config})  # type: ignore[arg-type]

    def controllers(c: ControllerCluster) -> list:
        return [NodeSimulator(c.client, c.informers, settings, c.events, clock=clock)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        # the in-process server runs no post-start hooks: the system namespace the Leases go in is made here
        await c.client.resource("", "v1", "namespaces").create({"metadata": {"name": "kube-node-lease"}})
        yield c.client


def _pods(client):  # noqa: ANN001, ANN202
    return client.resource("", "v1", "pods").namespace(NS)


def _pod(name: str, node: str = "sim-node-0", **spec: object) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}], **spec},
    }


async def _phase(client, name: str, phase: str) -> dict | None:  # noqa: ANN001
    pod = await _pods(client).get(name)
    return pod if (pod.get("status") or {}).get("phase") == phase else None


def _condition(obj: dict, kind: str) -> dict:
    return next(c for c in obj["status"].get("conditions") or [] if c["type"] == kind)


async def _ready_node(client, name: str) -> dict | None:  # noqa: ANN001
    try:
        node = await client.resource("", "v1", "nodes").get(name)
    except errors.StatusError:
        return None
    conditions = {c["type"]: c for c in (node.get("status") or {}).get("conditions") or []}
    return node if (conditions.get("Ready") or {}).get("status") == "True" else None


def test_simulated_nodes_register_ready_with_a_lease(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            node = await eventually(lambda: _ready_node(client, "sim-node-1"))
            assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "sim-node-1"
            assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
            ready = _condition(node, "Ready")
            assert (ready["reason"], ready["message"]) == ("KubeletReady", "kubelet is posting ready status")
            memory = _condition(node, "MemoryPressure")
            assert (memory["status"], memory["reason"]) == ("False", "KubeletHasSufficientMemory")
            assert node["status"]["capacity"]["pods"] == "110"
            assert node["status"]["nodeInfo"]["osImage"] == "Simulated"
            assert {"type": "Hostname", "address": "sim-node-1"} in node["status"]["addresses"]
            leases = client.resource("coordination.k8s.io", "v1", "leases").namespace("kube-node-lease")
            lease = await eventually(lambda: _get(leases, "sim-node-1"))
            assert lease["spec"]["holderIdentity"] == "sim-node-1"
            assert lease["spec"]["leaseDurationSeconds"] == 40
            assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"

    asyncio.run(main())


async def _get(resource, name: str) -> dict | None:  # noqa: ANN001
    try:
        return await resource.get(name)
    except errors.StatusError:
        return None


def test_the_lease_is_renewed(tmp_path: Path) -> None:
    async def main() -> None:
        # A lease of 4 s is renewed every second.
        async with simulated(tmp_path, lease_duration_seconds=4) as client:
            leases = client.resource("coordination.k8s.io", "v1", "leases").namespace("kube-node-lease")
            first = await eventually(lambda: _get(leases, "sim-node-0"))

            async def renewed() -> bool:
                lease = await leases.get("sim-node-0")
                return lease["spec"]["renewTime"] != first["spec"]["renewTime"]

            await eventually(renewed)

    asyncio.run(main())


def test_a_pod_on_a_simulated_node_runs_and_becomes_ready(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            spec = {"initContainers": [{"name": "init", "image": "busybox"}]}
            await _pods(client).create(_pod("web", **spec))
            pod = await eventually(lambda: _phase(client, "web", "Running"))
            pod = await eventually(lambda: _ready_pod(client, "web"))
            status = pod["status"]
            assert status["podIP"].startswith("10.64.0.")
            assert status["hostIP"] == "10.255.0.1"
            (container,) = status["containerStatuses"]
            assert container["ready"] and container["started"]
            assert container["containerID"].startswith("simulated://")
            assert "startedAt" in container["state"]["running"]
            (init,) = status["initContainerStatuses"]
            assert init["state"]["terminated"]["reason"] == "Completed"
            kinds = [c["type"] for c in status["conditions"]]
            assert kinds == [
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled",
            ]

    asyncio.run(main())


async def _ready_pod(client, name: str) -> dict | None:  # noqa: ANN001
    pod = await _pods(client).get(name)
    conditions = {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions") or []}
    return pod if conditions.get("Ready") == "True" else None


def test_a_readiness_probe_delays_ready(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            probe = {"exec": {"command": ["true"]}, "initialDelaySeconds": 1}
            await _pods(client).create(
                _pod("slow", containers=[{"name": "c", "image": "nginx", "readinessProbe": probe}])
            )
            pod = await eventually(lambda: _phase(client, "slow", "Running"))
            if pod["status"]["containerStatuses"][0]["ready"] is False:
                ready = _condition(pod, "Ready")
                assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
            await eventually(lambda: _ready_pod(client, "slow"))

    asyncio.run(main())


@pytest.mark.parametrize(
    ("policy", "annotations", "phase", "code"),
    [
        ("Never", {}, "Succeeded", 0),
        ("OnFailure", {}, "Succeeded", 0),
        ("Never", {EXIT_CODE_ANNOTATION: "3"}, "Failed", 3),
    ],
)
def test_pods_that_do_not_restart_complete(
    tmp_path: Path, policy: str, annotations: dict, phase: str, code: int
) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            pod = _pod("job", restartPolicy=policy)
            pod["metadata"]["annotations"] = annotations
            await _pods(client).create(pod)
            done = await eventually(lambda: _phase(client, "job", phase))
            terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
            assert terminated["exitCode"] == code
            assert terminated["reason"] == ("Completed" if code == 0 else "Error")
            assert _condition(done, "Ready")["status"] == "False"

    asyncio.run(main())


def test_a_failing_container_that_restarts_backs_off(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            pod = _pod("crash")
            pod["metadata"]["annotations"] = {EXIT_CODE_ANNOTATION: "1"}
            await _pods(client).create(pod)

            async def backing_off() -> dict | None:
                status = (await _pods(client).get("crash")).get("status") or {}
                statuses = status.get("containerStatuses") or [{}]
                waiting = (statuses[0].get("state") or {}).get("waiting") or {}
                return statuses[0] if waiting.get("reason") == "CrashLoopBackOff" else None

            container = await eventually(backing_off)
            assert container["lastState"]["terminated"]["exitCode"] == 1
            assert (await _pods(client).get("crash"))["status"]["phase"] == "Running"

    asyncio.run(main())


def test_a_deleted_pod_goes_once_its_containers_stopped(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            await _pods(client).create(_pod("web"))
            await eventually(lambda: _phase(client, "web", "Running"))
            deleted = await _pods(client).delete("web")
            assert deleted["metadata"]["deletionGracePeriodSeconds"] == 30

            async def gone() -> bool:
                return await _get(_pods(client), "web") is None

            await eventually(gone)

    asyncio.run(main())


def test_pods_on_other_nodes_are_left_alone(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await client.resource("", "v1", "nodes").create({"metadata": {"name": "real"}})
            await _pods(client).create(_pod("elsewhere", node="real"))
            await _pods(client).create(_pod("here"))
            await eventually(lambda: _phase(client, "here", "Running"))
            assert "phase" not in ((await _pods(client).get("elsewhere")).get("status") or {}) or (
                (await _pods(client).get("elsewhere"))["status"]["phase"] == "Pending"
            )
            assert not (await _pods(client).get("elsewhere"))["status"].get("containerStatuses")

    asyncio.run(main())


def test_a_node_annotated_for_kwok_is_adopted(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path, simulated_nodes=0) as client:
            node = {"metadata": {"name": "kwok-0", "annotations": {"kwok.x-k8s.io/node": "fake"}}}
            await client.resource("", "v1", "nodes").create(node)
            await eventually(lambda: _ready_node(client, "kwok-0"))

    asyncio.run(main())


def test_logs_and_exec_of_a_simulated_pod(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            await _pods(client).create(_pod("web"))
            path = _pods(client).path("web", "log")
            logs = await client.transport.round_trip("GET", path, accept="*/*")
            assert (logs.status, logs.body) == (
                200,
                b"simulated container c of pod default/web on node sim-node-0: no real process runs\n",
            )
            tail = await client.transport.round_trip("GET", path, [("tailLines", "0")], accept="*/*")
            assert (tail.status, tail.body) == (200, b"")
            # exec speaks websockets only; the loopback request is no upgrade
            path = _pods(client).path("web", "exec")
            refused = await client.transport.round_trip("POST", path, [("command", "ls")], accept="*/*")
            assert refused.status == 400
            assert b"answers exec and attach over websockets only" in refused.body

    asyncio.run(main())


def test_a_host_network_pod_gets_the_nodes_address_and_odd_annotations_are_ignored(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-1"))
            pod = _pod("host", node="sim-node-1", hostNetwork=True)
            pod["metadata"]["annotations"] = {
                "simulated.kube-apiserver.io/run-seconds": "1e308",
                EXIT_CODE_ANNOTATION: "not a number",
            }
            await _pods(client).create(pod)
            running = await eventually(lambda: _phase(client, "host", "Running"))
            assert running["status"]["podIP"] == running["status"]["hostIP"] == "10.255.0.2"

    asyncio.run(main())


class Clock:
    """Wall time plus however far a test moved it on."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


async def _touch(client, name: str, value: str) -> None:  # noqa: ANN001
    """A change that makes the simulator look at the pod again (now, by the moved clock)."""
    await _pods(client).patch(name, {"metadata": {"labels": {"touched": value}}})


def test_a_container_that_fails_restarts_after_its_back_off(tmp_path: Path) -> None:
    async def main() -> None:
        clock = Clock()
        async with simulated(tmp_path, clock=clock) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            pod = _pod("crash")
            pod["metadata"]["annotations"] = {
                EXIT_CODE_ANNOTATION: "1",
                "simulated.kube-apiserver.io/run-seconds": "600",
            }
            await _pods(client).create(pod)
            await eventually(lambda: _phase(client, "crash", "Running"))
            clock.offset += 601  # the container's run time is up: it exits 1 and backs off 10 s
            await _touch(client, "crash", "1")

            async def container(state: str) -> dict | None:
                statuses = ((await _pods(client).get("crash")).get("status") or {}).get(
                    "containerStatuses"
                ) or [{}]
                return statuses[0] if state in (statuses[0].get("state") or {}) else None

            waiting = await eventually(lambda: container("waiting"))
            assert waiting["state"]["waiting"]["reason"] == "CrashLoopBackOff"
            assert waiting["lastState"]["terminated"]["exitCode"] == 1
            clock.offset += 11  # the back-off is over: it runs again
            await _touch(client, "crash", "2")
            restarted = await eventually(lambda: container("running"))
            assert restarted["restartCount"] == 1
            assert restarted["lastState"]["terminated"]["reason"] == "Error"

    asyncio.run(main())


def test_a_slow_container_holds_its_deleted_pod_until_it_stops(tmp_path: Path) -> None:
    async def main() -> None:
        clock = Clock()
        async with simulated(tmp_path, clock=clock) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            pod = _pod("slow")
            pod["metadata"]["annotations"] = {"simulated.kube-apiserver.io/termination-seconds": "20"}
            await _pods(client).create(pod)
            await eventually(lambda: _phase(client, "slow", "Running"))
            await _pods(client).delete("slow")
            await _touch(client, "slow", "1")
            await asyncio.sleep(0.2)
            assert (await _pods(client).get("slow"))["metadata"]["deletionTimestamp"]
            clock.offset += 21  # its containers stopped
            await _touch(client, "slow", "2")

            async def gone() -> bool:
                return await _get(_pods(client), "slow") is None

            await eventually(gone)

    asyncio.run(main())


def test_the_kubelet_records_its_containers_events(tmp_path: Path) -> None:
    async def main() -> None:
        async with simulated(tmp_path) as client:
            await eventually(lambda: _ready_node(client, "sim-node-0"))
            await _pods(client).create(_pod("web"))

            async def started() -> list[dict]:
                events = (await client.resource("", "v1", "events").namespace(NS).list())["items"]
                return [e for e in events if e["involvedObject"]["name"] == "web"] if len(events) >= 3 else []

            events = await eventually(started)
            assert [(e["reason"], e["message"]) for e in events] == [
                (
                    "Pulled",
                    'Container image "nginx" already present on machine and can be accessed by the pod',
                ),
                ("Created", "Created container: c"),
                ("Started", "Started container c"),
            ]
            assert {e["source"]["host"] for e in events} == {"sim-node-0"}
            assert {e["source"]["component"] for e in events} == {"kubelet"}
            assert {e["involvedObject"]["fieldPath"] for e in events} == {"spec.containers{c}"}

    asyncio.run(main())
