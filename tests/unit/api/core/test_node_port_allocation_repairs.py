"""The repair controllers around the allocators: the node port repair after a change of
--service-node-port-range, the cluster IP repair's grace for an IPAddress whose Service is not written yet
(repairip.go: 60 s), and the controller's runs at start and at its (shortened) intervals."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from kube_apiserver.api.core.service.ipallocator import AllocationError, IPAllocator
from kube_apiserver.api.core.service.portallocator import NODE_PORTS_KEY, PortAllocator, PortSet
from kube_apiserver.api.core.service.repair import (
    IP_ADDRESS_GRACE_SECONDS,
    ClusterIPRepair,
    NodePortRepair,
    ServiceRepairController,
)
from kube_apiserver.apimachinery import errors
from kube_apiserver.cli.portrange import PortRange
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

Object = dict[str, Any]


class FakeStore:
    """The registry Store calls the repairs make: list, get, create, delete, by name."""

    def __init__(self, resource: str, *items: Object):
        self.resource = resource
        self.items = {self.key(item): item for item in items}

    @staticmethod
    def key(item: Object) -> str:
        meta = item["metadata"]
        return f"{meta.get('namespace', '')}/{meta['name']}"

    async def list(self, _ctx: Any, _query: Any) -> Object:
        return {"items": list(self.items.values())}

    async def get(self, ctx: Any, name: str) -> Object:
        try:
            return self.items[f"{ctx.namespace}/{name}"]
        except KeyError:
            raise errors.not_found(self.resource, "", name) from None

    async def create(self, _ctx: Any, obj: Object) -> Object:
        if self.key(obj) in self.items:
            raise errors.already_exists(self.resource, "", obj["metadata"]["name"])
        created = {**obj, "metadata": {**obj["metadata"], "creationTimestamp": stamp(time.time())}}
        self.items[self.key(obj)] = created
        return created

    async def delete(self, _ctx: Any, name: str, *_args: Any) -> Object:
        try:
            return self.items.pop(f"/{name}")
        except KeyError:
            raise errors.not_found(self.resource, "", name) from None


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def service(name: str, *ips: str) -> Object:
    return {"metadata": {"namespace": "default", "name": name}, "spec": {"clusterIPs": list(ips)}}


def test_a_young_ip_address_without_its_service_is_kept_for_the_grace_then_deleted():
    async def main() -> None:
        services = FakeStore("services", service("written", "10.0.0.30"))
        ips = IPAllocator("10.0.0.0/24", FakeStore("ipaddresses"))  # type: ignore[arg-type]
        await ips.allocate("10.0.0.30", service("written"), False)
        await ips.allocate("10.0.0.31", service("in-flight"), False)  # its Service not written yet
        await ips.allocate("10.0.0.32", service("written"), False)  # a Service that does not have it
        now = time.time()
        repair = ClusterIPRepair(services, ips, clock=lambda: now)  # type: ignore[arg-type]
        recheck = await repair.run_once()
        assert await ips.allocated() == {"10.0.0.30", "10.0.0.31"}  # a wrong reference goes at once
        assert 0 < recheck <= IP_ADDRESS_GRACE_SECONDS  # looked at again when the grace ends
        repair.clock = lambda: now + IP_ADDRESS_GRACE_SECONDS + 1
        assert await repair.run_once() is None
        assert await ips.allocated() == {"10.0.0.30"}

    asyncio.run(main())


def test_a_service_whose_ip_address_is_missing_gets_it_back():
    async def main() -> None:
        services = FakeStore("services", service("lost", "10.0.0.33"), service("out", "192.0.2.1"))
        ips = IPAllocator("10.0.0.0/24", FakeStore("ipaddresses"))  # type: ignore[arg-type]
        await ClusterIPRepair(services, ips).run_once()  # type: ignore[arg-type]
        assert await ips.allocated() == {"10.0.0.33"}  # one out of the range is only reported
        restored = (await ips.owned())[0]
        assert restored["spec"]["parentRef"] == {
            "group": "",
            "resource": "services",
            "namespace": "default",
            "name": "lost",
        }

    asyncio.run(main())


def test_a_changed_node_port_range_is_written_by_the_repair(tmp_path):
    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            storage = ObjectStore(kv)
            old = PortAllocator(PortRange(30000, 2768), storage)
            await old.stored.create_or_update(PortSet(PortRange(30000, 2768)).snapshot())
            await old.allocate(31500)
            narrower = PortAllocator(PortRange(31000, 1000), storage)  # --service-node-port-range=31000-31999
            with pytest.raises(AllocationError, match="the provided range does not match the current range"):
                await narrower.allocate(31001)
            in_use = FakeStore(
                "services", {"metadata": {"name": "s"}, "spec": {"ports": [{"nodePort": 31500}]}}
            )
            await NodePortRepair(in_use, narrower).run_once()  # type: ignore[arg-type]
            stored = await storage.get(NODE_PORTS_KEY)
            assert stored["range"] == "31000-31999"
            assert PortSet.from_snapshot(stored).ports() == [31500]
            await narrower.allocate(31001)
        finally:
            await kv.close()

    asyncio.run(main())


class CountingRepair:
    def __init__(self, result: Any = None):
        self.runs = 0
        self.result = result

    async def run_once(self) -> Any:
        self.runs += 1
        return self.result


def test_the_controller_runs_both_repairs_at_start_and_every_interval():
    async def main() -> None:
        allocators = type("Allocators", (), {"ports": None, "ips": None})()
        controller = ServiceRepairController(FakeStore("services"), allocators)  # type: ignore[arg-type]
        node_ports, cluster_ips = CountingRepair(), CountingRepair(result=0.01)  # an IPAddress in its grace
        controller.node_ports, controller.cluster_ips = node_ports, cluster_ips  # type: ignore[assignment]
        controller.node_port_interval = 0.01
        await controller.start()
        assert node_ports.runs >= 1 and cluster_ips.runs >= 1  # the post-start hook waits for both
        while node_ports.runs < 4 or cluster_ips.runs < 4:  # the IP repair at the end of the grace, not 3 min
            await asyncio.sleep(0.01)
        await controller.stop()
        runs = node_ports.runs
        await asyncio.sleep(0.05)
        assert node_ports.runs == runs

    asyncio.run(asyncio.wait_for(main(), 10))
