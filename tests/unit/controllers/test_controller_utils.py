"""The workload controllers' shared parts: expectations, slow-start batches, pods from a template with
their Events, and adoption/release of objects by a controller's selector."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kube_apiserver.apimachinery import errors
from kube_apiserver.apimachinery.labels import selector_from_set
from kube_apiserver.client.record import EventBroadcaster, EventSource
from kube_apiserver.controllers.controller_ref_manager import (
    AdoptionRefused,
    ControllerRefManager,
    recheck_deletion_timestamp,
)
from kube_apiserver.controllers.controller_utils import (
    EXPECTATIONS_TIMEOUT,
    ControllerExpectations,
    PodControl,
    UIDTrackingControllerExpectations,
    filter_active_pods,
    is_pod_ready,
    pod_from_template,
    pods_prefix,
    slow_start_batch,
)

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
      "metadata": {"name": "web-7d9f", "namespace": "default", "uid": "rs-uid"}}
TEMPLATE = {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}, "finalizers": ["f"]},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_expectations_hold_a_sync_until_observed_or_expired() -> None:
    now = [0.0]
    exp = ControllerExpectations(clock=lambda: now[0])
    assert exp.satisfied("ns/rs")  # nothing recorded
    exp.expect_creations("ns/rs", 2)
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert exp.satisfied("ns/rs")
    exp.expect_deletions("ns/rs", 1)
    assert not exp.satisfied("ns/rs")
    now[0] = EXPECTATIONS_TIMEOUT + 1
    assert exp.satisfied("ns/rs")  # expired: sync anyway
    exp.delete("ns/rs")
    assert exp.get("ns/rs") is None


def test_uid_tracking_counts_each_deleted_pod_once() -> None:
    exp = UIDTrackingControllerExpectations()
    exp.expect_deletions_of("ns/rs", ["ns/a", "ns/b"])
    exp.deletion_of_observed("ns/rs", "ns/a")
    exp.deletion_of_observed("ns/rs", "ns/a")  # the same pod's second delete event
    assert not exp.satisfied("ns/rs")
    exp.deletion_of_observed("ns/rs", "ns/b")
    assert exp.satisfied("ns/rs")


def test_slow_start_batches() -> None:
    assert slow_start_batch(0) == []
    assert slow_start_batch(1) == [1]
    assert slow_start_batch(10) == [1, 2, 4, 3]
    assert sum(slow_start_batch(500)) == 500


def test_pod_from_template_and_prefix() -> None:
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f", "uid": "rs-uid",
           "controller": True, "blockOwnerDeletion": True}
    pod = pod_from_template(TEMPLATE, RS, ref)
    assert pod["metadata"] == {"generateName": "web-7d9f-", "labels": {"app": "web"}, "annotations": {"a": "b"},
                               "finalizers": ["f"], "ownerReferences": [ref]}
    assert pod["spec"] == TEMPLATE["spec"] and pod["spec"] is not TEMPLATE["spec"]
    assert pods_prefix("Bad_Name") == "Bad_Name"


def test_active_and_ready_pods() -> None:
    running = {"metadata": {"name": "a"}, "status": {"phase": "Running",
                                                    "conditions": [{"type": "Ready", "status": "True"}]}}
    done = {"metadata": {"name": "b"}, "status": {"phase": "Succeeded"}}
    deleting = {"metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {}}
    assert filter_active_pods([running, done, deleting]) == [running]
    assert is_pod_ready(running) and not is_pod_ready(deleting)


def test_pod_control_creates_and_deletes_with_events(tmp_path: Path) -> None:
    from inprocess import in_process_server

    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            client = srv.client
            await client.resource("", "v1", "namespaces").create({"metadata": {"name": "default"}})
            await client.resource("", "v1", "serviceaccounts").namespace("default").create(
                {"metadata": {"name": "default"}})  # the server runs without its controllers here
            broadcaster = EventBroadcaster(client)
            broadcaster.start()
            control = PodControl(lambda ns: client.resource("", "v1", "pods").namespace(ns),
                                 broadcaster.new_recorder(EventSource("replicaset-controller")))
            created = await control.create_pods("default", TEMPLATE, RS, None)
            assert created["metadata"]["name"].startswith("web-7d9f-")
            await control.delete_pod("default", created["metadata"]["name"], RS)
            with pytest.raises(errors.StatusError):
                await control.create_pods("default", {**TEMPLATE, "spec": {"containers": []}}, RS, None)
            await broadcaster.flush()
            events = (await client.resource("", "v1", "events").namespace("default").list())["items"]
            reasons = sorted((e["reason"], e["message"].split(":")[0]) for e in events)
            assert reasons == [("FailedCreate", "Error creating"), ("SuccessfulCreate", "Created pod"),
                               ("SuccessfulDelete", "Deleted pod")]
            assert all(e["involvedObject"]["uid"] == "rs-uid" for e in events)
            await broadcaster.stop()

    asyncio.run(main())


class Patches:
    def __init__(self, missing: tuple[str, ...] = ()):
        self.sent: list[tuple[str, dict]] = []
        self.missing = missing

    async def __call__(self, namespace: str, name: str, patch: dict) -> dict:
        if name in self.missing:
            raise errors.StatusError(404, "NotFound", f'pods "{name}" not found')
        self.sent.append((name, patch))
        return {}


def _pod(name: str, labels: dict, owner_uid: str | None = None, **meta: str) -> dict:
    refs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": owner_uid, "controller": True}]
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid", "labels": labels,
                                        **({"ownerReferences": refs} if owner_uid else {}), **meta}}


def test_claim_adopts_orphans_releases_strays_and_leaves_others_alone() -> None:
    async def main() -> None:
        patches = Patches(missing=("gone",))
        manager = ControllerRefManager(RS, selector_from_set({"app": "web"}), "apps/v1", "ReplicaSet", patches)
        owned = _pod("owned", {"app": "web"}, "rs-uid")
        orphan = _pod("orphan", {"app": "web"})
        stray = _pod("stray", {"app": "db"}, "rs-uid")
        others = _pod("others", {"app": "web"}, "other-uid")
        dying = _pod("dying", {"app": "web"}, deletionTimestamp="2026-01-01T00:00:00Z")
        gone = _pod("gone", {"app": "web"})
        claimed = await manager.claim([owned, orphan, stray, others, dying, gone])
        assert [p["metadata"]["name"] for p in claimed] == ["owned", "orphan"]
        assert patches.sent == [
            ("orphan", {"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                           "name": "web-7d9f", "uid": "rs-uid", "controller": True,
                                                           "blockOwnerDeletion": True}], "uid": "orphan-uid"}}),
            ("stray", {"metadata": {"uid": "stray-uid", "ownerReferences": [{"$patch": "delete", "uid": "rs-uid"}]}}),
        ]

    asyncio.run(main())


def test_a_controller_being_deleted_adopts_nothing() -> None:
    async def main() -> None:
        patches = Patches()
        deleted = {**RS, "metadata": {**RS["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}

        async def fresh() -> dict:
            return deleted

        manager = ControllerRefManager(RS, selector_from_set({"app": "web"}), "apps/v1", "ReplicaSet", patches,
                                       recheck_deletion_timestamp(fresh))
        with pytest.raises(AdoptionRefused, match="has just been deleted"):
            await manager.claim([_pod("orphan", {"app": "web"})])
        assert patches.sent == []
        manager = ControllerRefManager(deleted, selector_from_set({"app": "web"}), "apps/v1", "ReplicaSet", patches)
        assert await manager.claim([_pod("orphan", {"app": "web"}), _pod("stray", {"app": "db"}, "rs-uid")]) == []
        assert patches.sent == []

    asyncio.run(main())
