"""The replicaset and replicationcontroller controllers against a real server (in-process, its loopback
client): pods created and deleted to match replicas, adoption and release, status and the
ReplicaFailure condition, the order pods go in on scale-down."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers.controller_utils import rank_pods_for_deletion
from kube_apiserver.controllers.replicaset import REPLICA_SETS, REPLICATION_CONTROLLERS, ReplicaSetController

NS = "default"
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@contextlib.asynccontextmanager
async def controller(tmp_path: Path, kind=REPLICA_SETS) -> AsyncIterator:  # noqa: ANN001
    def controllers(c: ControllerCluster) -> list:
        return [ReplicaSetController(kind, c.client, c.informers, c.recorder(kind.component))]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client, c.events


def _pods(client):  # noqa: ANN001, ANN202
    return client.resource("", "v1", "pods").namespace(NS)


async def _owned(client, uid: str) -> list[dict]:  # noqa: ANN001
    pods = (await _pods(client).list())["items"]
    return [p for p in pods if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or ())]


def test_a_replicaset_gets_its_pods_and_status_and_scales_down(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as (client, events):
            sets = client.resource("apps", "v1", "replicasets").namespace(NS)
            rs = await sets.create(
                {
                    "metadata": {"name": "web"},
                    "spec": {
                        "replicas": 3,
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": TEMPLATE,
                    },
                }
            )
            uid = rs["metadata"]["uid"]
            pods = await eventually(lambda: _n_owned(client, uid, 3))
            assert all(p["metadata"]["name"].startswith("web-") for p in pods)
            ref = pods[0]["metadata"]["ownerReferences"][0]
            assert ref == {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web",
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
            status = await eventually(lambda: _status(sets, "web", replicas=3))
            # Zero counts are omitted, as Go's omitempty writes them.
            assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1}
            # One pod becomes ready: counted ready and (minReadySeconds 0) available.
            ready = pods[0]
            ready["status"] = {
                "phase": "Running",
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                ],
            }
            await _pods(client).update_status(ready)
            await eventually(lambda: _status(sets, "web", readyReplicas=1, availableReplicas=1))
            # Scale to 1: the two not ready go first.
            await sets.patch("web", {"spec": {"replicas": 1}})
            remaining = await eventually(lambda: _n_owned(client, uid, 1))
            assert remaining[0]["metadata"]["name"] == ready["metadata"]["name"]
            await eventually(lambda: _status(sets, "web", replicas=1, observedGeneration=2))
            await events.flush()
            reasons = [
                e["reason"] for e in (await client.resource("", "v1", "events").namespace(NS).list())["items"]
            ]
            assert reasons.count("SuccessfulCreate") == 3 and reasons.count("SuccessfulDelete") == 2

    asyncio.run(main())


async def _n_owned(client, uid: str, count: int) -> list[dict] | None:  # noqa: ANN001
    owned = [p for p in await _owned(client, uid) if not p["metadata"].get("deletionTimestamp")]
    return owned if len(owned) == count else None


async def _status(api, name: str, **expected: int) -> dict | None:  # noqa: ANN001
    status = (await api.get(name)).get("status") or {}
    return status if all(status.get(k) == v for k, v in expected.items()) else None


def test_orphans_are_adopted_and_strays_released(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as (client, _events):
            orphan = await _pods(client).create(
                {"metadata": {"name": "orphan", "labels": {"app": "web"}}, "spec": TEMPLATE["spec"]}
            )
            sets = client.resource("apps", "v1", "replicasets").namespace(NS)
            rs = await sets.create(
                {
                    "metadata": {"name": "web"},
                    "spec": {
                        "replicas": 2,
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": TEMPLATE,
                    },
                }
            )
            owned = await eventually(lambda: _n_owned(client, rs["metadata"]["uid"], 2))
            assert "orphan" in [p["metadata"]["name"] for p in owned]  # adopted, so only one was created
            await _pods(client).patch("orphan", {"metadata": {"labels": {"app": "other"}}})
            # Released (its reference removed), and a new pod replaces it.
            await eventually(lambda: _released(client, "orphan"))
            await eventually(lambda: _n_owned(client, rs["metadata"]["uid"], 2))
            assert orphan["metadata"]["uid"] not in [
                p["metadata"]["uid"] for p in await _owned(client, rs["metadata"]["uid"])
            ]

    asyncio.run(main())


async def _released(client, name: str) -> bool:  # noqa: ANN001
    return not (await _pods(client).get(name))["metadata"].get("ownerReferences")


def test_a_refused_create_is_a_replica_failure_condition_and_event(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path, REPLICATION_CONTROLLERS) as (client, events):
            quotas = client.resource("", "v1", "resourcequotas").namespace(NS)
            quota = await quotas.create({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}})
            # What the resourcequota controller (not running here) would write first: admission enforces it.
            await quotas.update_status({**quota, "status": {"hard": {"pods": "1"}, "used": {"pods": "0"}}})
            rcs = client.resource("", "v1", "replicationcontrollers").namespace(NS)
            await rcs.create(
                {
                    "metadata": {"name": "web"},
                    "spec": {"replicas": 3, "selector": {"app": "web"}, "template": TEMPLATE},
                }
            )
            status = await eventually(lambda: _condition(rcs, "web"))
            condition = next(c for c in status["conditions"] if c["type"] == "ReplicaFailure")
            assert condition["status"] == "True" and condition["reason"] == "FailedCreate"
            assert "exceeded quota" in condition["message"]
            await events.flush()
            failed = [
                e
                for e in (await client.resource("", "v1", "events").namespace(NS).list())["items"]
                if e["reason"] == "FailedCreate"
            ]
            assert failed and failed[0]["source"] == {"component": "replication-controller"}
            assert failed[0]["message"].startswith("Error creating: pods ")

    asyncio.run(main())


async def _condition(api, name: str) -> dict | None:  # noqa: ANN001
    status = (await api.get(name)).get("status") or {}
    return status if any(c.get("type") == "ReplicaFailure" for c in status.get("conditions") or ()) else None


def _pod(
    name: str,
    node: str = "",
    phase: str = "Running",
    ready_at: str = "",
    created: str = "",
    cost: str = "",
    restarts: int = 0,
) -> dict:
    status: dict = {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}
    if ready_at:
        status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]
    meta: dict = {"name": name, "uid": name, "creationTimestamp": created or "2026-01-01T00:00:00Z"}
    if cost:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
    return {"metadata": meta, "spec": {"nodeName": node}, "status": status}


def test_scale_down_order() -> None:
    now = 1_800_000_000.0
    pods = [
        _pod("ready-old", "n1", ready_at="2026-01-01T00:00:00Z"),
        _pod("pending", "n1", phase="Pending"),
        _pod("unassigned", "", phase="Pending"),
        _pod("running-not-ready", "n1"),
        _pod("ready-expensive", "n1", ready_at="2026-01-01T00:00:00Z", cost="100"),
        _pod("ready-cheap", "n1", ready_at="2026-01-01T00:00:00Z", cost="-5"),
        _pod("ready-new", "n1", ready_at="2027-01-14T00:00:00Z"),
    ]
    order = [p["metadata"]["name"] for p in rank_pods_for_deletion(pods, [0] * len(pods), now)]
    assert order[:4] == ["unassigned", "pending", "running-not-ready", "ready-cheap"]
    assert order[-1] == "ready-expensive"
    assert order.index("ready-new") < order.index("ready-old")  # readier more recently goes first
    # More pods of the same owners on its node: goes first among equals.
    doubled = [
        _pod("a", "n1", ready_at="2026-01-01T00:00:00Z"),
        _pod("b", "n2", ready_at="2026-01-01T00:00:00Z"),
    ]
    assert [p["metadata"]["name"] for p in rank_pods_for_deletion(doubled, [1, 3], now)] == ["b", "a"]
