"""The deployment controller against a real server (in-process, its loopback client) with the replicaset
controller running too; the test plays the kubelet, making pods Ready by writing their status. A rollout
creates a ReplicaSet per template (pod-template-hash, revisions), honours maxSurge and maxUnavailable,
Recreate waits for the old pods, a paused Deployment does not roll, old sets beyond revisionHistoryLimit
go, a stuck rollout gets ProgressDeadlineExceeded, and scaling is spread over the sets by their share."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.apimachinery import errors
from kube_apiserver.apimachinery.meta import now_rfc3339
from kube_apiserver.controllers.deployment import COMPONENT, DeploymentController, util
from kube_apiserver.controllers.replicaset import REPLICA_SETS, ReplicaSetController

NS = "default"


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [
            ReplicaSetController(REPLICA_SETS, c.client, c.informers, c.recorder(REPLICA_SETS.component)),
            DeploymentController(c.client, c.informers, c.recorder(COMPONENT)),
        ]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client, c.events


def _deployment(name: str = "web", replicas: int = 3, image: str = "nginx:1", **spec: object) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


def _api(client, resource: str):  # noqa: ANN001, ANN202
    group = "" if resource == "pods" else "apps"
    return client.resource(group, "v1", resource).namespace(NS)


async def _sets(client) -> list[dict]:  # noqa: ANN001
    items = (await _api(client, "replicasets").list())["items"]
    return sorted(
        items, key=lambda rs: int(rs["metadata"].get("annotations", {}).get(util.REVISION_ANNOTATION, 0))
    )


async def mark_ready(client) -> None:  # noqa: ANN001
    """What a kubelet would write: every live pod Running and Ready."""
    for pod in (await _api(client, "pods").list())["items"]:
        if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") == "Running":
            continue
        pod["status"] = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now_rfc3339()}],
        }
        with contextlib.suppress(errors.StatusError):  # changed meanwhile (adopted, deleted): next round
            await _api(client, "pods").update_status(pod)


def _condition(d: dict, condition_type: str) -> dict:
    return util.get_condition(d.get("status") or {}, condition_type) or {}


async def _complete(client, name: str = "web") -> dict | None:  # noqa: ANN001
    """The rollout is done, as `kubectl rollout status` decides it; marks pods ready meanwhile."""
    await mark_ready(client)
    d = await _api(client, "deployments").get(name)
    st = d.get("status") or {}
    want = d["spec"]["replicas"]
    done = (
        st.get("observedGeneration", 0) >= d["metadata"]["generation"]
        and st.get("updatedReplicas", 0) == want
        and st.get("replicas", 0) == want
        and st.get("availableReplicas", 0) == want
        and _condition(d, "Progressing").get("reason") == util.NEW_RS_AVAILABLE_REASON
    )
    return d if done else None


async def _event_messages(client, events) -> list[dict]:  # noqa: ANN001
    await events.flush()
    items = (await client.resource("", "v1", "events").namespace(NS).list())["items"]
    return [e for e in items if e["involvedObject"].get("kind") == "Deployment"]


def test_create_then_a_rolling_update_within_max_surge(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, events):
            strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
            await _api(client, "deployments").create(_deployment(strategy=strategy))
            [first] = await eventually(lambda: _n_sets(client, 1))
            pod_template_hash = first["metadata"]["labels"][util.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY]
            assert first["metadata"]["name"] == f"web-{pod_template_hash}"
            assert first["spec"]["selector"]["matchLabels"] == {
                "app": "web",
                "pod-template-hash": pod_template_hash,
            }
            assert first["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == pod_template_hash
            assert first["metadata"]["annotations"] == {
                util.REVISION_ANNOTATION: "1",
                util.DESIRED_REPLICAS_ANNOTATION: "3",
                util.MAX_REPLICAS_ANNOTATION: "4",
            }
            assert first["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
            d = await eventually(lambda: _complete(client))
            assert d["metadata"]["annotations"][util.REVISION_ANNOTATION] == "1"
            assert {
                k: d["status"].get(k)
                for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
            } == dict.fromkeys(("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"), 3)
            available = _condition(d, "Available")
            assert (available["status"], available["reason"], available["message"]) == (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            )
            progressing = _condition(d, "Progressing")
            assert (progressing["status"], progressing["reason"], progressing["message"]) == (
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{first["metadata"]["name"]}" has successfully progressed.',
            )

            await _api(client, "deployments").patch(
                "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
            )
            old, new = await eventually(lambda: _n_sets(client, 2))
            # Surge first: one new replica, the old set untouched until it is available (maxUnavailable 0).
            assert (new["spec"]["replicas"], old["spec"]["replicas"]) == (1, 3)
            assert new["metadata"]["annotations"][util.REVISION_ANNOTATION] == "2"
            most = 0
            while not await _complete(client):
                most = max(most, sum(rs["spec"]["replicas"] for rs in await _sets(client)))
                await asyncio.sleep(0.02)
            assert most <= 4  # replicas + maxSurge
            old, new = await _sets(client)
            assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 3)
            d = await _api(client, "deployments").get("web")
            assert d["metadata"]["annotations"][util.REVISION_ANNOTATION] == "2"
            messages = [
                e["message"]
                for e in await _event_messages(client, events)
                if e["reason"] == "ScalingReplicaSet"
            ]
            assert messages[0] == f"Scaled up replica set {first['metadata']['name']} from 0 to 3"
            assert f"Scaled up replica set {new['metadata']['name']} from 0 to 1" in messages
            assert f"Scaled down replica set {old['metadata']['name']} from 1 to 0" in messages

    asyncio.run(main())


async def _n_sets(client, count: int) -> list[dict] | None:  # noqa: ANN001
    sets = await _sets(client)
    return sets if len(sets) == count else None


def test_recreate_scales_the_old_set_down_before_the_new_one_exists(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, _events):
            await _api(client, "deployments").create(_deployment(replicas=2, strategy={"type": "Recreate"}))
            await eventually(lambda: _complete(client))
            await _api(client, "deployments").patch(
                "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
            )
            old, new = await eventually(lambda: _n_sets(client, 2))
            assert old["spec"]["replicas"] == 0
            pods = (await _api(client, "pods").list())["items"]
            old_hash = old["metadata"]["labels"]["pod-template-hash"]
            assert not [p for p in pods if p["metadata"]["labels"]["pod-template-hash"] == old_hash]
            assert new["spec"]["replicas"] == 2
            await eventually(lambda: _complete(client))

    asyncio.run(main())


def test_a_paused_deployment_does_not_roll_out_until_resumed(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, _events):
            await _api(client, "deployments").create(_deployment(replicas=1))
            await eventually(lambda: _complete(client))
            await _api(client, "deployments").patch(
                "web",
                {
                    "spec": {
                        "paused": True,
                        "template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
                    }
                },
            )
            d = await eventually(lambda: _paused(client))
            assert _condition(d, "Progressing")["message"] == "Deployment is paused"
            assert len(await _sets(client)) == 1
            await _api(client, "deployments").patch("web", {"spec": {"paused": False}})
            await eventually(lambda: _n_sets(client, 2))
            await eventually(lambda: _complete(client))

    asyncio.run(main())


async def _paused(client) -> dict | None:  # noqa: ANN001
    d = await _api(client, "deployments").get("web")
    observed = (d.get("status") or {}).get("observedGeneration", 0) >= d["metadata"]["generation"]
    return d if observed and _condition(d, "Progressing").get("reason") == util.PAUSED_DEPLOY_REASON else None


def test_old_sets_beyond_the_revision_history_limit_are_deleted(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, _events):
            await _api(client, "deployments").create(_deployment(replicas=1, revisionHistoryLimit=1))
            await eventually(lambda: _complete(client))
            for image in ("nginx:2", "nginx:3"):
                await _api(client, "deployments").patch(
                    "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}
                )
                await eventually(lambda: _complete(client))
            sets = await eventually(lambda: _n_sets(client, 2))
            assert [rs["metadata"]["annotations"][util.REVISION_ANNOTATION] for rs in sets] == ["2", "3"]

    asyncio.run(main())


def test_a_rollout_that_does_not_progress_exceeds_its_deadline(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, _events):
            await _api(client, "deployments").create(_deployment(replicas=2, progressDeadlineSeconds=1))
            d = await eventually(lambda: _timed_out(client))  # no pod ever becomes ready
            [rs] = await _sets(client)
            progressing = _condition(d, "Progressing")
            assert (progressing["status"], progressing["message"]) == (
                "False",
                f'ReplicaSet "{rs["metadata"]["name"]}" has timed out progressing.',
            )
            available = _condition(d, "Available")
            assert (available["status"], available["reason"]) == ("False", "MinimumReplicasUnavailable")
            assert d["status"]["unavailableReplicas"] == 2

    asyncio.run(main())


async def _timed_out(client) -> dict | None:  # noqa: ANN001
    d = await _api(client, "deployments").get("web")
    return d if _condition(d, "Progressing").get("reason") == util.TIMED_OUT_REASON else None


def test_scaling_and_scaling_in_the_middle_of_a_rollout(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, events):
            strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
            await _api(client, "deployments").create(_deployment(replicas=2, strategy=strategy))
            await eventually(lambda: _complete(client))
            await _api(client, "deployments").patch("web", {"spec": {"replicas": 4}})
            [rs] = await eventually(lambda: _sizes(client, [4]))
            assert rs["metadata"]["annotations"][util.DESIRED_REPLICAS_ANNOTATION] == "4"
            await eventually(lambda: _complete(client))
            messages = [e["message"] for e in await _event_messages(client, events)]
            assert f"Scaled up replica set {rs['metadata']['name']} from 2 to 4" in messages
            # A rollout that cannot progress (new pods never ready): 4 old, 1 new (the surge).
            await _api(client, "deployments").patch(
                "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
            )
            await eventually(lambda: _sizes(client, [4, 1]))
            # Scaled to 8 meanwhile: 9 allowed, the 4 added split 3:1 by the sets' shares of 5 (max-replicas).
            await _api(client, "deployments").patch("web", {"spec": {"replicas": 8}})
            await eventually(lambda: _sizes(client, [7, 2]))

    asyncio.run(main())


async def _sizes(client, sizes: list[int]) -> list[dict] | None:  # noqa: ANN001
    sets = await _sets(client)
    return sets if [rs["spec"]["replicas"] for rs in sets] == sizes else None


def test_fenceposts_hash_and_revisions() -> None:
    assert util.resolve_fenceposts("25%", "25%", 10) == (3, 2)  # surge rounds up, unavailable down
    assert util.resolve_fenceposts(0, 0, 3) == (0, 1)  # one may be unavailable, or nothing would move
    assert util.resolve_fenceposts("0%", "10%", 3) == (0, 1)
    template = _deployment()["spec"]["template"]
    first = util.compute_hash(template, None)
    assert first == util.compute_hash({"spec": template["spec"], "metadata": template["metadata"]}, None)
    assert first != util.compute_hash(template, 1)  # a collision count gives another name
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789") and len(first) <= 10
    labelled = {"metadata": {"labels": {"app": "web", "pod-template-hash": first}}, "spec": template["spec"]}
    assert util.equal_ignore_hash(template, labelled)
    sets = [{"metadata": {"annotations": {util.REVISION_ANNOTATION: v}}} for v in ("1", "3", "2")]
    assert (util.max_revision(sets), util.last_revision(sets)) == (3, 2)
    rs = {"metadata": {"annotations": {util.REVISION_ANNOTATION: "2", util.REVISION_HISTORY_ANNOTATION: "1"}}}
    util.set_new_replica_set_annotations(_deployment(), rs, "4", True, 2000)
    assert rs["metadata"]["annotations"][util.REVISION_HISTORY_ANNOTATION] == "1,2"
    assert rs["metadata"]["annotations"][util.REVISION_ANNOTATION] == "4"


def test_a_hash_collision_bumps_the_collision_count(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, _events):
            # Paused: no set yet, and the template as stored (defaulted) is what gets hashed.
            d = await _api(client, "deployments").create(_deployment(replicas=1, paused=True))
            pod_template_hash = util.compute_hash(d["spec"]["template"], None)
            # Someone else's set already has the name the new set would get (not owned, another template).
            squatter = _deployment(name=f"web-{pod_template_hash}", replicas=0, image="other")
            await _api(client, "replicasets").create(squatter)
            await _api(client, "deployments").patch("web", {"spec": {"paused": False}})
            d = await eventually(lambda: _collided(client))
            assert d["status"]["collisionCount"] == 1
            sets = await eventually(lambda: _n_sets(client, 2))
            ours = next(rs for rs in sets if rs["metadata"].get("ownerReferences"))
            assert ours["metadata"]["name"] == f"web-{util.compute_hash(d['spec']['template'], 1)}"
            await eventually(lambda: _complete(client))

    asyncio.run(main())


async def _collided(client) -> dict | None:  # noqa: ANN001
    d = await _api(client, "deployments").get("web")
    return d if (d.get("status") or {}).get("collisionCount") else None


def test_the_deprecated_rollback_annotation_restores_a_revision(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, events):
            await _api(client, "deployments").create(_deployment(replicas=1))
            await eventually(lambda: _complete(client))
            await _api(client, "deployments").patch(
                "web", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
            )
            await eventually(lambda: _complete(client))
            await _api(client, "deployments").patch(
                "web", {"metadata": {"annotations": {util.DEPRECATED_ROLLBACK_TO: "1"}}}
            )
            d = await eventually(lambda: _rolled_back(client))
            assert util.DEPRECATED_ROLLBACK_TO not in d["metadata"]["annotations"]
            await eventually(lambda: _complete(client))
            messages = [
                e["message"]
                for e in await _event_messages(client, events)
                if e["reason"] == "DeploymentRollback"
            ]
            assert messages == ['Rolled back deployment "web" to revision 1']

    asyncio.run(main())


async def _rolled_back(client) -> dict | None:  # noqa: ANN001
    d = await _api(client, "deployments").get("web")
    return d if d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1" else None


def test_a_replica_failure_of_the_new_set_is_the_deployments(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as (client, _events):
            quotas = client.resource("", "v1", "resourcequotas").namespace(NS)
            quota = await quotas.create({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}})
            # What the resourcequota controller (not running here) would write first: admission enforces it.
            await quotas.update_status({**quota, "status": {"hard": {"pods": "1"}, "used": {"pods": "0"}}})
            await _api(client, "deployments").create(_deployment(replicas=2))
            d = await eventually(lambda: _with_condition(client, "ReplicaFailure"))
            failure = _condition(d, "ReplicaFailure")
            assert (failure["status"], failure["reason"]) == ("True", "FailedCreate")
            assert "exceeded quota" in failure["message"]
            assert failure["lastUpdateTime"] == failure["lastTransitionTime"]

    asyncio.run(main())


async def _with_condition(client, condition_type: str) -> dict | None:  # noqa: ANN001
    d = await _api(client, "deployments").get("web")
    return d if _condition(d, condition_type) else None
