"""Node ports allocated from the RangeAllocation /registry/ranges/servicenodeports: kube-apiserver's bitmap
bytes (big.Int.Bytes()), compare-and-swap writes retried on conflict, several allocators (replicas) on one
storage, and the repair that rebuilds the bitmap and frees a leaked port only at its third sighting."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from kube_apiserver.api.core.service.bitmap import AllocationBitmap, from_bytes, to_bytes
from kube_apiserver.api.core.service.ipallocator import AllocationError
from kube_apiserver.api.core.service.portallocator import (
    NODE_PORTS_KEY,
    PortAllocator,
    PortOperation,
    PortSet,
)
from kube_apiserver.api.core.service.rangeallocation import RangeConflictError
from kube_apiserver.api.core.service.repair import NUM_REPAIRS_BEFORE_LEAK_CLEANUP, NodePortRepair
from kube_apiserver.cli.portrange import PortRange
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

RANGE = PortRange(30000, 2768)  # 30000-32767


def run_with_store(tmp_path, test) -> None:
    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            await test(ObjectStore(kv))
        finally:
            await kv.close()

    asyncio.run(main())


async def initialize(storage: ObjectStore, *ports: int) -> None:
    """What the repair's first run writes: the range's bitmap."""
    initial = PortSet(RANGE)
    for port in ports:
        initial.allocate(port)
    await PortAllocator(RANGE, storage).stored.create_or_update(initial.snapshot())


async def stored_ports(storage: ObjectStore) -> list[int]:
    return PortSet.from_snapshot(await storage.get(NODE_PORTS_KEY)).ports()


class FakeServices:
    """A Services store's list, all the repair reads of it."""

    def __init__(self, *node_ports: int):
        self.items = [
            {
                "metadata": {"namespace": "default", "name": f"s{port}"},
                "spec": {"ports": [{"nodePort": port}]},
            }
            for port in node_ports
        ]

    async def list(self, _ctx: Any, _query: Any) -> dict[str, Any]:
        return {"items": self.items}


# ---- the bitmap bytes ----


def test_bitmap_bytes_are_go_big_int_bytes():
    ports = PortSet(RANGE)
    ports.allocate(30000)
    ports.allocate(30002)
    snapshot = ports.snapshot()
    assert snapshot["range"] == "30000-32767"
    assert base64.b64decode(snapshot["data"]) == b"\x05"  # bits 0 and 2
    assert snapshot["data"] == "BQ=="
    assert to_bytes(0) == b""  # big.Int.Bytes() of zero: no bytes
    assert to_bytes(1 << 2767) == b"\x80" + b"\x00" * 345  # the last port: big-endian, no leading zeros
    assert from_bytes(b"\x00\x05") == 5


def test_bitmap_restores_from_kube_apiserver_bytes():
    restored = PortSet.from_snapshot({"range": "30000-32767", "data": "AQAE"})  # 0x010004: bits 2 and 16
    assert restored.ports() == [30002, 30016]
    assert restored.has(30016) and not restored.has(30000)
    bitmap = AllocationBitmap(8, "x")
    with pytest.raises(AllocationError, match="the provided range does not match the current range"):
        bitmap.restore("y", b"\x01")


def test_dynamic_allocations_take_the_upper_band_first():
    bitmap = AllocationBitmap(100, "r", offset=16)
    picked = {bitmap.allocate_next() for _ in range(84)}
    assert picked == set(range(16, 100))
    assert bitmap.allocate_next() < 16
    while bitmap.allocate_next() is not None:
        pass
    assert bitmap.count == 100 and bitmap.free() == 0


# ---- the stored bitmap ----


def test_nothing_is_allocated_before_the_range_is_initialized(tmp_path):
    async def test(storage: ObjectStore) -> None:
        with pytest.raises(
            AllocationError, match="cannot allocate resources of type servicenodeportallocations at this time"
        ):
            await PortAllocator(RANGE, storage).allocate(30000)

    run_with_store(tmp_path, test)


def test_allocations_are_stored_as_kube_apiserver_writes_them(tmp_path):
    async def test(storage: ObjectStore) -> None:
        await initialize(storage)
        ports = PortAllocator(RANGE, storage)
        await ports.allocate(30000)
        await ports.allocate(30002)
        stored = await storage.get(NODE_PORTS_KEY)
        assert (stored["apiVersion"], stored["kind"]) == ("v1", "RangeAllocation")
        assert (stored["range"], stored["data"]) == ("30000-32767", "BQ==")
        with pytest.raises(AllocationError, match="provided port is already allocated"):
            await ports.allocate(30002)
        with pytest.raises(AllocationError, match="The range of valid ports is 30000-32767"):
            await ports.allocate(29999)
        await ports.release(30000)
        await ports.release(30000)  # free already: nothing written
        assert (await storage.get(NODE_PORTS_KEY))["data"] == "BA=="

    run_with_store(tmp_path, test)


def test_replicas_on_one_storage_never_share_a_port(tmp_path):
    async def test(storage: ObjectStore) -> None:
        await initialize(storage)
        first, second = PortAllocator(RANGE, storage), PortAllocator(RANGE, storage)
        await first.allocate(30005)
        with pytest.raises(AllocationError, match="provided port is already allocated"):
            await second.allocate(30005)  # its own copy did not know: restored from the stored bitmap
        picked = await asyncio.gather(*(replica.allocate_next() for replica in (first, second) * 40))
        assert len(set(picked)) == 80 and 30005 not in picked
        assert sorted(await stored_ports(storage)) == sorted([30005, *picked])
        await first.release(picked[1])  # allocated by the second
        await second.allocate(picked[1])

    run_with_store(tmp_path, test)


class InterleavingStore:
    """Storage whose first compare-and-swap loses to another replica's allocation written in between."""

    def __init__(self, storage: ObjectStore, rival: PortAllocator, port: int):
        self.storage, self.rival, self.port = storage, rival, port
        self.attempts = 0

    async def get(self, key: str) -> Any:
        return await self.storage.get(key)

    async def guaranteed_update(self, key: str, try_update: Any, **kwargs: Any) -> Any:
        async def update(existing: dict[str, Any]) -> dict[str, Any]:
            self.attempts += 1
            updated = await try_update(existing)
            if self.attempts == 1:
                await self.rival.allocate(self.port)  # the stored revision moves on: this write conflicts
            return updated

        return await self.storage.guaranteed_update(key, update, **kwargs)


def test_a_conflicting_write_is_retried_on_the_stored_bitmap(tmp_path):
    async def test(storage: ObjectStore) -> None:
        await initialize(storage)
        interleaving = InterleavingStore(storage, PortAllocator(RANGE, storage), 30001)
        ports = PortAllocator(RANGE, interleaving)  # type: ignore[arg-type]
        await ports.allocate(30001 + 1)
        assert interleaving.attempts == 2
        assert await stored_ports(storage) == [30001, 30002]  # neither write lost
        assert ports.has(30001)  # this replica's copy restored from the stored one

    run_with_store(tmp_path, test)


def test_a_failed_operation_gives_its_ports_back_and_a_dry_run_takes_none(tmp_path):
    async def test(storage: ObjectStore) -> None:
        await initialize(storage)
        ports = PortAllocator(RANGE, storage)
        op = PortOperation(ports, dry_run=False)
        await op.allocate(30010)
        dynamic = await op.allocate_next()
        await op.finish()  # not committed: undone
        assert await stored_ports(storage) == []
        dry = PortOperation(ports, dry_run=True)
        await dry.allocate(30010)
        assert await dry.allocate_next() == 30011  # a guess after the highest
        await dry.commit()
        assert await stored_ports(storage) == [] and dynamic >= 30000 + 86

    run_with_store(tmp_path, test)


# ---- the repair ----


def test_repair_initializes_rebuilds_and_frees_a_leak_only_at_its_third_run(tmp_path):
    async def test(storage: ObjectStore) -> None:
        ports = PortAllocator(RANGE, storage)
        repair = NodePortRepair(FakeServices(30100), ports)  # type: ignore[arg-type]
        await repair.run_once()  # creates the RangeAllocation, with the Service's port
        assert await stored_ports(storage) == [30100]
        await ports.allocate(30200)  # a create in flight: its Service is not written yet
        for _ in range(NUM_REPAIRS_BEFORE_LEAK_CLEANUP - 1):
            await repair.run_once()
            assert await stored_ports(storage) == [30100, 30200]
        await repair.run_once()
        assert await stored_ports(storage) == [30100]
        with pytest.raises(AllocationError, match="already allocated"):
            await ports.allocate(30100)

    run_with_store(tmp_path, test)


def test_repair_does_not_overwrite_an_allocation_made_while_it_ran(tmp_path):
    async def test(storage: ObjectStore) -> None:
        await initialize(storage)
        ports, other = PortAllocator(RANGE, storage), PortAllocator(RANGE, storage)
        services = FakeServices()
        repair = NodePortRepair(services, ports)  # type: ignore[arg-type]

        async def list_then_allocate(_ctx: Any, _query: Any) -> dict[str, Any]:
            listed = {"items": []}
            if not getattr(list_then_allocate, "done", False):
                list_then_allocate.done = True  # type: ignore[attr-defined]
                await other.allocate(30300)  # after the repair read the bitmap
            return listed

        services.list = list_then_allocate  # type: ignore[method-assign]
        snapshot = await ports.stored.get()
        await other.allocate(30301)
        with pytest.raises(RangeConflictError, match="the provided resource version does not match"):
            await ports.stored.create_or_update(
                PortSet(RANGE).snapshot(snapshot["metadata"]["resourceVersion"])
            )
        await repair.run_once()  # conflicts once, then rebuilds from the newer bitmap
        assert await stored_ports(storage) == [30300, 30301]  # both held as possible leaks, not dropped

    run_with_store(tmp_path, test)


def test_repair_releases_the_port_of_a_deleted_service_after_the_leak_count(tmp_path):
    async def test(storage: ObjectStore) -> None:
        ports = PortAllocator(RANGE, storage)
        services = FakeServices(30400, 30401)
        repair = NodePortRepair(services, ports)  # type: ignore[arg-type]
        await repair.run_once()
        services.items.pop()  # a Service deleted without releasing its port (a crash)
        for _ in range(NUM_REPAIRS_BEFORE_LEAK_CLEANUP):
            await repair.run_once()
        assert await stored_ports(storage) == [30400]
        await ports.allocate(30401)

    run_with_store(tmp_path, test)


def test_a_repair_retried_on_conflicts_counts_a_leak_once(tmp_path):
    async def test(storage: ObjectStore) -> None:
        await initialize(storage, 30500)  # held by a create in flight: no Service has it yet
        ports, other = PortAllocator(RANGE, storage), PortAllocator(RANGE, storage)
        services = FakeServices()
        rivals = [30501, 30502, 30503]

        async def list_while_others_allocate(_ctx: Any, _query: Any) -> dict[str, Any]:
            if rivals:
                await other.allocate(rivals.pop())  # each attempt's write then conflicts
            return {"items": []}

        services.list = list_while_others_allocate  # type: ignore[method-assign]
        await NodePortRepair(services, ports).run_once()  # type: ignore[arg-type]
        assert 30500 in await stored_ports(storage)  # one run: one count, however many attempts

    run_with_store(tmp_path, test)
