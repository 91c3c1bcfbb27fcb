"""The endpointslice controller against a real server (in-process): slices of a Service's pods with the
controller's labels, owner reference, generateName, conditions, nodeName, zone and targetRef; at most
max-endpoints-per-slice endpoints per slice; the placeholder of a Service with no pods; and the
reconciler's least-churn placement (pure)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from test_endpoint import make_pod, make_service

from inprocess import ControllerCluster, controller_cluster, eventually, in_process_server
from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.controllers.endpointslice.controller import COMPONENT, EndpointSliceController
from kube_apiserver.controllers.endpointslice.mirroring import COMPONENT as MIRRORING_COMPONENT
from kube_apiserver.controllers.endpointslice.mirroring import EndpointSliceMirroringController
from kube_apiserver.controllers.endpointslice.reconciler import Reconciler

NS = "default"


@contextlib.asynccontextmanager
async def controller(tmp_path: Path, max_per_slice: int = 100) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [EndpointSliceController(c.client, c.informers, c.recorder(COMPONENT), max_per_slice)]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client


async def _node(client, name: str, zone: str) -> None:  # noqa: ANN001
    labels = {"topology.kubernetes.io/zone": zone}
    await client.resource("", "v1", "nodes").create({"metadata": {"name": name, "labels": labels}})


async def _slices(client, service: str = "web") -> list[dict]:  # noqa: ANN001
    api = client.resource("discovery.k8s.io", "v1", "endpointslices").namespace(NS)
    return (await api.list(labelSelector=f"kubernetes.io/service-name={service}"))["items"]


def test_slices_list_a_services_pods_with_conditions_and_zones(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            await _node(client, "node-a", "zone-1")
            ready = await make_pod(client, "web-1", "10.0.0.1", True)
            not_ready = await make_pod(client, "web-2", "10.0.0.2", False)
            service = await make_service(client)

            async def two() -> list[dict]:
                slices = await _slices(client)
                return slices if slices and len(slices[0].get("endpoints") or ()) == 2 else []

            [endpoint_slice] = await eventually(two)
            meta = endpoint_slice["metadata"]
            assert meta["name"].startswith("web-") and meta["generateName"] == "web-"
            assert meta["labels"] == {
                "tier": "front",
                "kubernetes.io/service-name": "web",
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
            }
            assert meta["ownerReferences"] == [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "name": "web",
                    "uid": service["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ]
            assert meta["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"]
            assert endpoint_slice["addressType"] == "IPv4"
            assert endpoint_slice["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
            by_ip = {e["addresses"][0]: e for e in endpoint_slice["endpoints"]}
            assert by_ip["10.0.0.1"] == {
                "addresses": ["10.0.0.1"],
                "conditions": {"ready": True, "serving": True, "terminating": False},
                "targetRef": {
                    "kind": "Pod",
                    "namespace": NS,
                    "name": "web-1",
                    "uid": ready["metadata"]["uid"],
                },
                "nodeName": "node-a",
                "zone": "zone-1",
            }
            assert by_ip["10.0.0.2"]["conditions"] == {"ready": False, "serving": False, "terminating": False}
            assert by_ip["10.0.0.2"]["targetRef"]["uid"] == not_ready["metadata"]["uid"]

            # The pods go: the slice stays, empty, as the Service's placeholder.
            for name in ("web-1", "web-2"):
                await client.resource("", "v1", "pods").namespace(NS).delete(name, gracePeriodSeconds=0)

            async def emptied() -> list[dict]:
                slices = await _slices(client)
                return slices if len(slices) == 1 and not slices[0].get("endpoints") else []

            [placeholder] = await eventually(emptied)
            assert placeholder["metadata"]["name"] == meta["name"]  # updated in place, not replaced

    asyncio.run(main())


def test_at_most_max_endpoints_per_slice(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path, max_per_slice=2) as client:
            await _node(client, "node-a", "zone-1")
            for i in range(5):
                await make_pod(client, f"web-{i}", f"10.0.0.{i + 1}", True)
            await make_service(client)

            async def five() -> list[dict]:
                slices = await _slices(client)
                return slices if sum(len(s.get("endpoints") or ()) for s in slices) == 5 else []

            slices = await eventually(five)
            assert sorted(len(s["endpoints"]) for s in slices) == [1, 2, 2]

    asyncio.run(main())


def test_pods_on_a_missing_node_wait_for_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            await make_pod(client, "web-1", "10.0.0.1", True, node="late")
            await make_service(client)

            async def placeholder() -> list[dict]:
                return await _slices(client)

            [endpoint_slice] = await eventually(placeholder)
            assert not endpoint_slice.get("endpoints")
            await _node(client, "late", "zone-2")  # the retried sync finds it

            async def listed() -> list[dict]:
                slices = await _slices(client)
                return slices if slices and slices[0].get("endpoints") else []

            [endpoint_slice] = await eventually(listed)
            assert endpoint_slice["endpoints"][0]["zone"] == "zone-2"

    asyncio.run(main())


# ---- the reconciler's placement, pure ----

SERVICE = {
    "metadata": {"name": "web", "namespace": NS, "uid": "svc-uid", "labels": {}},
    "spec": {
        "selector": {"app": "web"},
        "clusterIP": "10.96.0.10",
        "ipFamilies": ["IPv4"],
        "ports": [{"port": 80}],
    },
}


def _pod(i: int) -> dict:
    return {
        "metadata": {"name": f"p{i}", "namespace": NS, "uid": f"u{i}", "labels": {"app": "web"}},
        "spec": {"nodeName": "n"},
        "status": {"podIP": f"10.0.0.{i}", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _existing(name: str, pods: list[dict], reconciler: Reconciler) -> dict:
    changes = reconciler.reconcile(SERVICE, pods, [])
    [created] = changes.create
    created["metadata"].update(name=name, resourceVersion="1")
    return created


def test_reconciler_keeps_endpoints_in_place_and_fills_the_closest_fit() -> None:
    node = {"metadata": {"name": "n"}}
    reconciler = Reconciler("endpointslice-controller.k8s.io", 3, lambda name: node)
    full = _existing("full", [_pod(1), _pod(2), _pod(3)], reconciler)
    roomy = _existing("roomy", [_pod(4)], reconciler)
    # Pods 1-4 unchanged, pod 5 new: it goes into the unchanged slice with room, nothing else is written.
    changes = reconciler.reconcile(SERVICE, [_pod(i) for i in range(1, 6)], [full, roomy])
    assert not changes.create and not changes.delete
    [updated] = changes.update
    assert updated["metadata"]["name"] == "roomy"
    assert [e["targetRef"]["name"] for e in updated["endpoints"]] == ["p4", "p5"]
    # Pod 4 goes: its slice would empty, so it is deleted... unless a create takes its place.
    changes = reconciler.reconcile(SERVICE, [_pod(1), _pod(2), _pod(3)], [full, roomy])
    assert [s["metadata"]["name"] for s in changes.delete] == ["roomy"] and not changes.update


# ---- endpointslicemirroring ----


@contextlib.asynccontextmanager
async def mirroring(tmp_path: Path) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [EndpointSliceMirroringController(c.client, c.informers, c.recorder(MIRRORING_COMPONENT))]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client


def test_hand_written_endpoints_are_mirrored_into_slices(tmp_path: Path) -> None:
    async def main() -> None:
        async with mirroring(tmp_path) as client:
            await (
                client.resource("", "v1", "services")
                .namespace(NS)
                .create({"metadata": {"name": "ext"}, "spec": {"ports": [{"port": 80}]}})
            )
            subset = {
                "addresses": [{"ip": "192.0.2.1", "nodeName": "n1"}, {"ip": "2001:db8::1"}],
                "notReadyAddresses": [{"ip": "192.0.2.2"}],
                "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
            }
            body = {"metadata": {"name": "ext", "labels": {"team": "a"}, "annotations": {"note": "x"}}}
            endpoints = (
                await client.resource("", "v1", "endpoints")
                .namespace(NS)
                .create({**body, "subsets": [subset]})
            )

            async def both_families() -> list[dict]:
                slices = await _slices(client, "ext")
                return slices if len(slices) == 2 else []

            slices = {s["addressType"]: s for s in await eventually(both_families)}
            ipv4 = slices["IPv4"]
            assert ipv4["metadata"]["labels"] == {
                "team": "a",
                "kubernetes.io/service-name": "ext",
                "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io",
            }
            assert ipv4["metadata"]["annotations"] == {"note": "x"}
            assert ipv4["metadata"]["ownerReferences"][0]["kind"] == "Endpoints"
            assert ipv4["metadata"]["ownerReferences"][0]["uid"] == endpoints["metadata"]["uid"]
            assert ipv4["ports"] == [{"name": "http", "port": 80, "protocol": "TCP"}]
            assert sorted((e["addresses"], e["conditions"]["ready"]) for e in ipv4["endpoints"]) == [
                (["192.0.2.1"], True),
                (["192.0.2.2"], False),
            ]
            assert [e["addresses"] for e in slices["IPv6"]["endpoints"]] == [["2001:db8::1"]]

            # An address goes: the slice is rewritten in place.
            subset["notReadyAddresses"] = []
            endpoints = await client.resource("", "v1", "endpoints").namespace(NS).get("ext")
            await (
                client.resource("", "v1", "endpoints")
                .namespace(NS)
                .update({**endpoints, "subsets": [subset]})
            )

            async def one_ipv4() -> list[dict]:
                slices = [s for s in await _slices(client, "ext") if s["addressType"] == "IPv4"]
                return slices if len(slices) == 1 and len(slices[0]["endpoints"]) == 1 else []

            [rewritten] = await eventually(one_ipv4)
            assert rewritten["metadata"]["name"] == ipv4["metadata"]["name"]

            # skip-mirror: the mirrored slices go.
            await (
                client.resource("", "v1", "endpoints")
                .namespace(NS)
                .patch("ext", {"metadata": {"labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}}})
            )

            async def none() -> bool:
                return not await _slices(client, "ext")

            await eventually(none)

    asyncio.run(main())


# ---- flags ----


def test_max_endpoints_flags_reach_the_controller_manager(tmp_path: Path) -> None:
    async def main() -> None:
        flags = ("--max-endpoints-per-slice=2", "--mirroring-max-endpoints-per-subset=7")
        async with in_process_server(str(tmp_path), *flags) as srv:
            configured = srv.config.extra.endpoint_slices
            assert (configured.max_endpoints_per_slice, configured.mirroring_max_endpoints_per_subset) == (
                2,
                7,
            )

    asyncio.run(main())


def test_max_endpoints_flags_are_validated(tmp_path: Path) -> None:
    args = [
        "--data-dir",
        str(tmp_path),
        "--max-endpoints-per-slice=0",
        "--mirroring-max-endpoints-per-subset=1001",
    ]
    errs = ServerRunOptions.parse(args).complete().validate()
    assert "max-endpoints-per-slice must be at least 1, got 0" in errs
    assert "mirroring-max-endpoints-per-subset must be less than or equal to 1000, got 1001" in errs


def test_traffic_distribution_hints() -> None:
    """PreferClose: ready endpoints hinted for their zone; PreferSameNode adds their node; unset: none."""
    node = {"metadata": {"name": "n", "labels": {"topology.kubernetes.io/zone": "z1"}}}
    reconciler = Reconciler("endpointslice-controller.k8s.io", 100, lambda name: node)
    not_ready = _pod(2)
    not_ready["status"]["conditions"][0]["status"] = "False"
    pods = [_pod(1), not_ready]
    close = {**SERVICE, "spec": {**SERVICE["spec"], "trafficDistribution": "PreferClose"}}
    [created] = reconciler.reconcile(close, pods, []).create
    hints = {e["targetRef"]["name"]: e.get("hints") for e in created["endpoints"]}
    assert hints == {"p1": {"forZones": [{"name": "z1"}]}, "p2": None}

    created["metadata"].update(name="s", resourceVersion="1")
    assert not reconciler.reconcile(close, pods, [created]).update  # hints as wanted: nothing to write
    same_node = {**SERVICE, "spec": {**SERVICE["spec"], "trafficDistribution": "PreferSameNode"}}
    [updated] = reconciler.reconcile(same_node, pods, [created]).update
    assert updated["endpoints"][0]["hints"] == {"forZones": [{"name": "z1"}], "forNodes": [{"name": "n"}]}
    [cleared] = reconciler.reconcile(SERVICE, pods, [created]).update  # no distribution: hints removed
    assert all("hints" not in e for e in cleared["endpoints"])
