"""The endpoint reconcilers of the kubernetes Service (lease: live /masterleases keys under a TTL;
master-count; none) and the apiserver identity Lease's name and expiry."""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from kube_apiserver.apimachinery import errors
from kube_apiserver.controlplane.identitylease import identity_lease_name, lease_expired
from kube_apiserver.controlplane.kubernetesservice import KubernetesServiceConfig, KubernetesServiceController
from kube_apiserver.controlplane.reconcilers import (
    LeaseReconciler,
    MasterCountReconciler,
    NoneReconciler,
)
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV


def test_lease_reconciler_lists_the_live_leases_sorted_and_a_removed_one_leaves(tmp_path):
    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            first, second = LeaseReconciler(ObjectStore(kv)), LeaseReconciler(ObjectStore(kv))
            assert await first.addresses("192.0.2.9", []) == ["192.0.2.9"]
            assert await second.addresses("192.0.2.10", []) == ["192.0.2.10", "192.0.2.9"]  # as strings
            stored = await kv.get("/registry/masterleases/192.0.2.9")
            assert b'"subsets":[{"addresses":[{"ip":"192.0.2.9"}]}]' in stored.value
            before = stored.mod_revision
            await first.addresses("192.0.2.9", [])
            assert (
                await kv.get("/registry/masterleases/192.0.2.9")
            ).mod_revision > before  # written: TTL renewed
            assert await second.remove("192.0.2.10", []) == ["192.0.2.9"]
            assert await first.remove("192.0.2.9", []) is None  # never erase every endpoint
        finally:
            await kv.close()

    asyncio.run(main())


def test_lease_reconciler_keys_expire_after_the_ttl(tmp_path):
    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            reconciler = LeaseReconciler(ObjectStore(kv), ttl=0.01)
            await reconciler.addresses("192.0.2.9", [])
            await asyncio.sleep(0.05)
            assert await kv.expire_leases() == 1
            assert await reconciler.list_leases() == []
        finally:
            await kv.close()

    asyncio.run(main())


def test_master_count_adds_its_address_and_cuts_those_after_it():
    async def main() -> None:
        two = MasterCountReconciler(2)
        assert await two.addresses("10.1.0.2", []) == ["10.1.0.2"]
        assert await two.addresses("10.1.0.2", ["10.1.0.1", "10.1.0.2"]) == ["10.1.0.1", "10.1.0.2"]
        assert await two.addresses("10.1.0.2", ["10.1.0.1", "10.1.0.3"]) == ["10.1.0.1", "10.1.0.2"]
        assert await two.addresses("10.1.0.3", ["10.1.0.1", "10.1.0.2"]) == ["10.1.0.2", "10.1.0.3"]  # wraps
        assert await two.remove("10.1.0.2", ["10.1.0.1", "10.1.0.2"]) == ["10.1.0.1"]
        assert await NoneReconciler().addresses("10.1.0.2", []) is None

    asyncio.run(main())


def test_identity_lease_name_is_a_hash_of_the_hostname():
    name = identity_lease_name("node-a")
    assert re.fullmatch(r"apiserver-[a-z2-7]{26}", name)
    assert name == identity_lease_name("node-a") != identity_lease_name("node-b")


def test_an_identity_lease_expires_after_its_duration_or_when_incomplete():
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    renewed = (now - timedelta(seconds=3599)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    old = (now - timedelta(seconds=3601)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert not lease_expired({"spec": {"renewTime": renewed, "leaseDurationSeconds": 3600}}, now)
    assert lease_expired({"spec": {"renewTime": old, "leaseDurationSeconds": 3600}}, now)
    assert lease_expired({"spec": {"leaseDurationSeconds": 3600}}, now)
    assert lease_expired({"spec": {"renewTime": renewed}}, now)


class RacingStore:
    """A store where another replica creates the object between this one's read and its create."""

    def __init__(self, resource: str, group: str, rival: dict) -> None:
        self.resource, self.group, self.rival = resource, group, rival
        self.objects: dict[str, dict] = {}
        self.strategy = SimpleNamespace(default=lambda obj: None)

    async def get(self, ctx, name: str) -> dict:  # noqa: ANN001 - registry Context
        if name not in self.objects:
            raise errors.not_found(self.resource, self.group, name)
        return self.objects[name]

    async def create(self, ctx, obj: dict) -> dict:  # noqa: ANN001
        name = obj["metadata"]["name"]
        if name not in self.objects:  # the rival's create lands first
            self.objects[name] = {**self.rival, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
            raise errors.already_exists(self.resource, self.group, name)
        raise errors.already_exists(self.resource, self.group, name)

    async def update(self, ctx, name: str, info) -> tuple[dict, bool]:  # noqa: ANN001
        self.objects[name] = await info.transform(ctx, self.objects[name])
        return self.objects[name], False


def test_replicas_racing_to_create_the_kubernetes_endpoints_converge_without_an_error(caplog):
    """Replicas starting together both find no Endpoints and create them; the loser reads them again at
    once and writes its addresses, instead of logging an error and waiting an interval."""
    endpoints = RacingStore("endpoints", "", {"subsets": []})
    slices = RacingStore("endpointslices", "discovery.k8s.io", {"endpoints": [], "addressType": "IPv4"})
    routes = {
        ("", "v1"): {"endpoints": SimpleNamespace(scope=SimpleNamespace(storage=endpoints))},
        ("discovery.k8s.io", "v1"): {
            "endpointslices": SimpleNamespace(scope=SimpleNamespace(storage=slices))
        },
    }
    config = KubernetesServiceConfig("", "192.0.2.7", lambda: 6443)
    controller = KubernetesServiceController(SimpleNamespace(group_versions=routes), config)
    with caplog.at_level(logging.INFO):
        asyncio.run(controller.sync())
    assert [r.message for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert endpoints.objects["kubernetes"]["subsets"][0]["addresses"] == [{"ip": "192.0.2.7"}]
    assert slices.objects["kubernetes"]["endpoints"][0]["addresses"] == ["192.0.2.7"]
