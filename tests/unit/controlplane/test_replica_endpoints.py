"""The endpoint reconcilers of the kubernetes Service (lease: live /masterleases keys under a TTL;
master-count; none) and the apiserver identity Lease's name and expiry."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta

from kube_apiserver.controlplane.identitylease import identity_lease_name, lease_expired
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
