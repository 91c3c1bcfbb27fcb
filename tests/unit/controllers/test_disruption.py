"""The disruption controller against a real server (in-process): PodDisruptionBudget status from the
pods it selects (minAvailable and maxUnavailable, ints and percentages of the controllers' scale), the
DisruptionAllowed condition and its SyncFailed fail-safe, and the pods/eviction subresource spending
that status: 429 with the DisruptionBudget cause, disruptedPods recorded then cleaned up, the
unhealthyPodEvictionPolicy, and a budget with an empty selector covering every pod."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inprocess import ControllerCluster, controller_cluster, eventually, in_process_server
from kube_apiserver.apimachinery import errors
from kube_apiserver.controllers.disruption import COMPONENT, DisruptionController
from kube_apiserver.controllers.manager import ControllerManager

NS = "default"


@contextlib.asynccontextmanager
async def controller(tmp_path: Path) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [DisruptionController(c.client, c.informers, c.recorder(COMPONENT))]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client


def _api(client, group: str, resource: str):  # noqa: ANN001, ANN202
    return client.resource(group, "v1", resource).namespace(NS)


async def _replica_set(client, name: str, replicas: int) -> dict:  # noqa: ANN001
    """A ReplicaSet object (no replicaset controller runs: the test creates its pods)."""
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    body = {
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template},
    }
    return await _api(client, "apps", "replicasets").create(body)


async def _pod(client, name: str, owner: dict | None, ready: bool = True) -> dict:  # noqa: ANN001
    meta: dict = {"name": name, "labels": {"app": "web"}}
    if owner is not None:
        ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"]}
        meta["ownerReferences"] = [{**ref, "uid": owner["metadata"]["uid"], "controller": True}]
    spec = {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "node-a"}
    pod = await _api(client, "", "pods").create({"metadata": meta, "spec": spec})
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    pod["status"] = {"phase": "Running", "podIP": "10.0.0.1", "conditions": [condition]}
    return await _api(client, "", "pods").update_status(pod)


async def _budget(client, name: str = "web", **spec: object) -> dict:  # noqa: ANN001
    body = {"metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}
    return await _api(client, "policy", "poddisruptionbudgets").create(body)


async def _status(client, name: str = "web", **wanted: object) -> dict | None:  # noqa: ANN001
    pdb = await _api(client, "policy", "poddisruptionbudgets").get(name)
    status = pdb.get("status") or {}
    if status.get("observedGeneration") != pdb["metadata"]["generation"]:
        return None
    return status if all(status.get(k, 0) == v for k, v in wanted.items()) else None


def _condition(status: dict) -> dict:
    [condition] = [c for c in status["conditions"] if c["type"] == "DisruptionAllowed"]
    return {k: condition.get(k) for k in ("status", "reason", "message", "observedGeneration")}


async def _evict(client, pod: str) -> None:  # noqa: ANN001
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}}
    await _api(client, "", "pods").create(body, subresource="eviction", name=pod)


def test_max_unavailable_from_the_controllers_scale_and_evictions_spend_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            rs = await _replica_set(client, "web", 3)
            for i in range(3):
                await _pod(client, f"web-{i}", rs)
            await _budget(client, maxUnavailable=1)
            status = await eventually(lambda: _status(client, currentHealthy=3, disruptionsAllowed=1))
            assert (status["desiredHealthy"], status["expectedPods"]) == (2, 3)
            assert _condition(status) == {
                "status": "True",
                "reason": "SufficientPods",
                "message": "",
                "observedGeneration": 1,
            }

            # Allowed: spends the one disruption and records the pod (seen on a watch: the controller
            # drops the entry as soon as it sees the pod being deleted).
            budgets = _api(client, "policy", "poddisruptionbudgets")
            watch = await budgets.watch(
                resourceVersion=(await budgets.get("web"))["metadata"]["resourceVersion"]
            )
            await _evict(client, "web-0")
            spent = await asyncio.wait_for(_first_status_write(watch), 15)
            assert spent["disruptionsAllowed"] == 0 and "web-0" in spent["disruptedPods"]
            await watch.stop()
            evicted = await _api(client, "", "pods").get("web-0")
            assert evicted["metadata"]["deletionTimestamp"]
            [target] = [c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget"]
            assert (target["status"], target["reason"], target["message"]) == (
                "True",
                "EvictionByEvictionAPI",
                "Eviction API: evicting",
            )

            # web-0 is being deleted: the controller drops its disruptedPods entry and counts 2 healthy.
            status = await eventually(lambda: _status(client, currentHealthy=2, disruptedPods=0))
            assert status["disruptionsAllowed"] == 0
            assert _condition(status)["reason"] == "InsufficientPods"

            with pytest.raises(errors.StatusError) as refused:
                await _evict(client, "web-1")
            assert refused.value.code == 429
            assert (
                refused.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
            )
            assert refused.value.details["causes"] == [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
                }
            ]

    asyncio.run(main())


async def _first_status_write(watch) -> dict:  # noqa: ANN001
    async for event in watch:
        status = event["object"].get("status") or {}
        if status.get("disruptedPods"):
            return status
    raise AssertionError("watch ended")


def test_min_available_percent_and_unhealthy_pod_eviction_policy(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            rs = await _replica_set(client, "web", 4)
            for i in range(3):
                await _pod(client, f"web-{i}", rs)
            await _pod(client, "sick", rs, ready=False)
            await _budget(client, minAvailable="75%", unhealthyPodEvictionPolicy="AlwaysAllow")
            status = await eventually(lambda: _status(client, currentHealthy=3, desiredHealthy=3))
            assert status["expectedPods"] == 4 and status["disruptionsAllowed"] == 0
            with pytest.raises(errors.StatusError) as refused:
                await _evict(client, "web-0")
            assert refused.value.code == 429
            await _evict(client, "sick")  # not ready: AlwaysAllow lets it go without a disruption spent
            sick = await _api(client, "", "pods").get("sick")
            assert sick["metadata"]["deletionTimestamp"]
            assert any(c["type"] == "DisruptionTarget" for c in sick["status"]["conditions"])

    asyncio.run(main())


def test_a_pod_of_no_known_controller_fails_safe(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            ghost = {"metadata": {"name": "gone", "uid": "0000"}}
            await _pod(client, "web-0", ghost)
            await _pod(client, "web-1", None)
            await _budget(client, maxUnavailable="50%")

            async def failed() -> dict | None:
                pdb = await _api(client, "policy", "poddisruptionbudgets").get("web")
                conditions = (pdb.get("status") or {}).get("conditions") or []
                return pdb["status"] if any(c.get("reason") == "SyncFailed" for c in conditions) else None

            status = await eventually(failed)
            assert status["disruptionsAllowed"] == 0
            assert _condition(status)["message"] == 'found no controllers for pod "web-0"'
            assert _condition(status)["status"] == "False"

    asyncio.run(main())


def test_an_empty_selector_covers_every_pod_of_the_namespace(tmp_path: Path) -> None:
    """policy/v1: unlike v1beta1, an empty selector matches every pod (eviction and the controller)."""

    async def main() -> None:
        async with controller(tmp_path) as client:
            await _pod(client, "web-0", None)
            body = {"metadata": {"name": "all"}, "spec": {"selector": {}, "minAvailable": 1}}
            await _api(client, "policy", "poddisruptionbudgets").create(body)
            await eventually(lambda: _status(client, "all", currentHealthy=1, desiredHealthy=1))
            with pytest.raises(errors.StatusError) as refused:
                await _evict(client, "web-0")
            assert refused.value.code == 429

    asyncio.run(main())


def test_a_stale_disruption_target_condition_is_reset(tmp_path: Path) -> None:
    """An evicted pod whose deletion never came (its DisruptionTarget condition over two minutes old)."""

    async def main() -> None:
        async with controller(tmp_path) as client:
            pod = await _pod(client, "stuck", None)
            pod["status"]["conditions"].append(
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "EvictionByEvictionAPI",
                    "message": "Eviction API: evicting",
                    "lastTransitionTime": "2020-01-01T00:00:00Z",
                }
            )
            await _api(client, "", "pods").update_status(pod)

            async def reset() -> dict | None:
                current = await _api(client, "", "pods").get("stuck")
                [target] = [c for c in current["status"]["conditions"] if c["type"] == "DisruptionTarget"]
                return target if target["status"] == "False" else None

            target = await eventually(reset)
            assert target["lastTransitionTime"] != "2020-01-01T00:00:00Z"

    asyncio.run(main())


def test_the_scale_of_a_custom_resource_controller(tmp_path: Path) -> None:
    """getScaleController: a kind with no informer of its own is scaled through its /scale, custom
    resources included."""

    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            # The post-start hooks: the apiextensions controllers establish the CRD; "default" is made.
            await srv.server.hooks.run_post_start_hooks()
            client = srv.client
            await client.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions").create(CRONTABS)
            crontabs = client.resource("stable.example.com", "v1", "crontabs").namespace(NS)

            async def created() -> dict | None:
                try:
                    return await crontabs.create({"metadata": {"name": "ct"}, "spec": {"replicas": 5}})
                except errors.StatusError:
                    return None  # not served yet

            crontab = await eventually(created)
            manager = ControllerManager([], srv.server.restful.group_versions, srv.server)
            manager.loopback = client
            scale = await manager._get_scale("stable.example.com/v1", "CronTab", NS, "ct")
            assert scale is not None and scale["spec"]["replicas"] == 5
            assert scale["metadata"]["uid"] == crontab["metadata"]["uid"]
            assert await manager._get_scale("stable.example.com/v1", "CronTab", NS, "gone") is None

    asyncio.run(main())


CRONTABS = {
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
                "subresources": {
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
                },
            }
        ],
    },
}


def test_percent_of_a_deployments_scale_through_its_replica_set(tmp_path: Path) -> None:
    """getPodDeployment: the pods' ReplicaSet belongs to a Deployment, whose spec.replicas counts."""

    async def main() -> None:
        async with controller(tmp_path) as client:
            template = {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            }
            spec = {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}, "template": template}
            deployment = await _api(client, "apps", "deployments").create(
                {"metadata": {"name": "web"}, "spec": spec}
            )
            owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
            rs_meta = {
                "name": "web-abc",
                "ownerReferences": [{**owner, "uid": deployment["metadata"]["uid"]}],
            }
            rs = await _api(client, "apps", "replicasets").create(
                {"metadata": rs_meta, "spec": {**spec, "replicas": 2}}
            )
            for i in range(2):
                await _pod(client, f"web-{i}", rs)
            await _budget(client, maxUnavailable="50%")
            status = await eventually(lambda: _status(client, expectedPods=4))
            assert (status["desiredHealthy"], status["currentHealthy"], status["disruptionsAllowed"]) == (
                2,
                2,
                0,
            )

    asyncio.run(main())


def test_unmanaged_pods_are_reported(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            await _pod(client, "loner", None)
            selector = {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}],
            }
            await _budget(client, maxUnavailable="10%", selector=selector)
            status = await eventually(lambda: _status(client, currentHealthy=1))
            assert (status["expectedPods"], status["disruptionsAllowed"]) == (0, 0)

            async def reported() -> list[dict]:
                events = (await _api(client, "", "events").list())["items"]
                return [e for e in events if e["reason"] == "UnmanagedPods"]

            [event] = await eventually(reported)
            assert event["type"] == "Warning" and event["involvedObject"]["kind"] == "PodDisruptionBudget"
            assert event["message"] == (
                "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string"
                "{app: web,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:tier,"
                "Operator:DoesNotExist,Values:[],},},}) were found to be unmanaged. As a result, the status of the "
                "PDB cannot be calculated correctly, which may result in undefined behavior. To account for these "
                'pods please set ".spec.minAvailable" field of the PDB to an integer value.'
            )

    asyncio.run(main())
