"""Graceful deletion in the generic Store (rest.BeforeDelete), with a pod-like strategy: an unscheduled
object goes at once, a scheduled one waits its grace period until a delete with gracePeriodSeconds=0."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.registry.context import Context
from kube_apiserver.registry.options import DeleteOptions, ListQuery
from kube_apiserver.registry.rest import ResourceInfo
from kube_apiserver.registry.store import Store
from kube_apiserver.registry.strategy import Strategy
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

INFO = ResourceInfo("", "v1", "pods", "Pod", "pod", True)


class PodLikeStrategy(Strategy):
    def check_graceful_delete(self, obj, options) -> bool:
        spec = obj.get("spec") or {}
        period = options.grace_period_seconds
        if period is None:
            period = spec.get("terminationGracePeriodSeconds", 0)
        if not spec.get("nodeName"):
            period = 0
        options.grace_period_seconds = period
        return True


def pod(name: str, node: str = "") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "terminationGracePeriodSeconds": 30}}


def test_graceful_deletion(tmp_path):
    async def main():
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            store = Store(INFO, PodLikeStrategy(INFO), ObjectStore(kv), "/registry/pods")
            ctx = Context("default")
            await store.create(ctx, pod("unscheduled"))
            _, gone = await store.delete(ctx, "unscheduled", None, DeleteOptions())
            assert gone
            await store.create(ctx, pod("running", node="node-1"))
            out, gone = await store.delete(ctx, "running", None, DeleteOptions())
            assert not gone and out["metadata"]["deletionGracePeriodSeconds"] == 30
            stamp = datetime.datetime.strptime(out["metadata"]["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
            left = stamp.replace(tzinfo=datetime.UTC) - datetime.datetime.now(datetime.UTC)
            assert 25 < left.total_seconds() <= 31
            again, gone = await store.delete(ctx, "running", None, DeleteOptions())
            assert not gone and again["metadata"]["deletionTimestamp"] == out["metadata"]["deletionTimestamp"]
            shorter, gone = await store.delete(ctx, "running", None, DeleteOptions(grace_period_seconds=5))
            assert not gone and shorter["metadata"]["deletionGracePeriodSeconds"] == 5
            _, gone = await store.delete(ctx, "running", None, DeleteOptions(grace_period_seconds=0))
            assert gone
            with pytest.raises(StatusError):
                await store.get(ctx, "running")
        finally:
            await kv.close()

    asyncio.run(main())


def test_delete_collection_decides_each_object_from_the_clients_options(tmp_path):
    """DeleteCollection deep-copies the options per object: the grace period the first object's deletion
    settled on (0, unscheduled) does not carry over to a scheduled one."""
    async def main():
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            store = Store(INFO, PodLikeStrategy(INFO), ObjectStore(kv), "/registry/pods")
            ctx = Context("default")
            await store.create(ctx, pod("a-unscheduled"))
            await store.create(ctx, pod("b-running", node="node-1"))
            options = DeleteOptions()
            await store.delete_collection(ctx, None, options, ListQuery())
            assert options.grace_period_seconds is None
            running = await store.get(ctx, "b-running")
            assert running["metadata"]["deletionGracePeriodSeconds"] == 30
            with pytest.raises(StatusError):
                await store.get(ctx, "a-unscheduled")
        finally:
            await kv.close()

    asyncio.run(main())


def test_a_shorter_grace_period_shortens_a_deletion_held_by_finalizers(tmp_path):
    """rest.BeforeDelete: a delete with a shorter grace period moves deletionTimestamp back by the difference
    and sets deletionGracePeriodSeconds, 0 included, though a finalizer keeps the object (a Job's pod)."""
    async def main():
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            store = Store(INFO, PodLikeStrategy(INFO), ObjectStore(kv), "/registry/pods")
            ctx = Context("default")
            held = pod("held", node="node-1")
            held["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
            await store.create(ctx, held)
            first, _ = await store.delete(ctx, "held", None, DeleteOptions())
            stamp = datetime.datetime.strptime(first["metadata"]["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
            now, gone = await store.delete(ctx, "held", None, DeleteOptions(grace_period_seconds=0))
            assert not gone and now["metadata"]["deletionGracePeriodSeconds"] == 0
            moved = stamp - datetime.timedelta(seconds=30)
            assert now["metadata"]["deletionTimestamp"] == moved.strftime("%Y-%m-%dT%H:%M:%SZ")
            assert now["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        finally:
            await kv.close()

    asyncio.run(main())
