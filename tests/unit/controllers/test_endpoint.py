"""The endpoint controller against a real server (in-process): Endpoints from a Service's pods (ready
and not-ready addresses, named target ports, hostname, nodeName, targetRef), the controller's labels
and trigger-time annotation, headless Services and publishNotReadyAddresses, deletion with the Service,
hand-written Endpoints of selector-less Services left alone; repacking and truncation at 1000."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inprocess import ControllerCluster, controller_cluster, eventually
from kube_apiserver.controllers import endpoint as endpoint_module
from kube_apiserver.controllers.endpoint import (
    COMPONENT,
    EndpointController,
    repack_subsets,
    truncate_endpoints,
)

NS = "default"


@contextlib.asynccontextmanager
async def controller(tmp_path: Path) -> AsyncIterator:
    def controllers(c: ControllerCluster) -> list:
        return [EndpointController(c.client, c.informers, c.recorder(COMPONENT))]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c.client


def _api(client, resource: str):  # noqa: ANN001, ANN202
    return client.resource("", "v1", resource).namespace(NS)


async def make_pod(
    client,  # noqa: ANN001
    name: str,
    ip: str,
    ready: bool,
    labels: dict | None = None,
    node: str = "node-a",
    **spec: object,
) -> dict:
    """A pod bound to `node`, given an IP and a Ready condition as a kubelet would."""
    container = {"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}
    pod = await _api(client, "pods").create(
        {
            "metadata": {"name": name, "labels": labels or {"app": "web"}},
            "spec": {"containers": [container], "nodeName": node, **spec},
        }
    )
    pod["status"] = {
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": "2026-01-02T03:04:05Z",
            }
        ],
    }
    return await _api(client, "pods").update_status(pod)


async def make_service(client, name: str = "web", **spec: object) -> dict:  # noqa: ANN001
    body = {
        "metadata": {"name": name, "labels": {"tier": "front"}},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
            **spec,
        },
    }
    return await _api(client, "services").create(body)


async def _endpoints(client, name: str = "web") -> dict | None:  # noqa: ANN001
    items = (await _api(client, "endpoints").list())["items"]
    return next((e for e in items if e["metadata"]["name"] == name), None)


def test_endpoints_list_ready_and_not_ready_pods_by_named_port(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            ready = await make_pod(client, "web-1", "10.0.0.1", True, hostname="one", subdomain="web")
            not_ready = await make_pod(client, "web-2", "10.0.0.2", False)
            await make_pod(client, "other", "10.0.0.3", True, labels={"app": "other"})
            service = await make_service(client)

            async def both() -> dict | None:
                ep = await _endpoints(client)
                return ep if ep and ep.get("subsets") and ep["subsets"][0].get("notReadyAddresses") else None

            ep = await eventually(both)
            assert ep["subsets"] == [
                {
                    "addresses": [
                        {
                            "ip": "10.0.0.1",
                            "hostname": "one",
                            "nodeName": "node-a",
                            "targetRef": {
                                "kind": "Pod",
                                "namespace": NS,
                                "name": "web-1",
                                "uid": ready["metadata"]["uid"],
                            },
                        }
                    ],
                    "notReadyAddresses": [
                        {
                            "ip": "10.0.0.2",
                            "nodeName": "node-a",
                            "targetRef": {
                                "kind": "Pod",
                                "namespace": NS,
                                "name": "web-2",
                                "uid": not_ready["metadata"]["uid"],
                            },
                        }
                    ],
                    "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
                }
            ]
            assert ep["metadata"]["labels"] == {
                "tier": "front",
                "endpoints.kubernetes.io/managed-by": "endpoint-controller",
            }
            # A new Service: the trigger time is its creation.
            trigger = ep["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"]
            assert trigger == service["metadata"]["creationTimestamp"]

            # The second pod turns ready: both addresses ready.
            not_ready["status"]["conditions"][0].update(
                status="True", lastTransitionTime="2026-01-02T03:05:00Z"
            )
            await _api(client, "pods").update_status(not_ready)

            async def all_ready() -> dict | None:
                ep = await _endpoints(client)
                subsets = (ep or {}).get("subsets") or [{}]
                return ep if len(subsets[0].get("addresses") or ()) == 2 else None

            ep = await eventually(all_ready)
            assert "notReadyAddresses" not in ep["subsets"][0]
            annotations = ep["metadata"]["annotations"]
            assert annotations["endpoints.kubernetes.io/last-change-trigger-time"] == "2026-01-02T03:05:00Z"

            # The Service goes: so do its Endpoints.
            await _api(client, "services").delete("web")
            await eventually(lambda: _gone(client, "web"))

    asyncio.run(main())


async def _gone(client, name: str) -> bool:  # noqa: ANN001
    return await _endpoints(client, name) is None


def test_headless_service_and_publish_not_ready_addresses(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            await make_pod(client, "web-1", "10.0.0.1", False)
            await make_service(client, "headless", clusterIP="None", ports=[], publishNotReadyAddresses=True)

            async def listed() -> dict | None:
                ep = await _endpoints(client, "headless")
                return ep if ep and ep.get("subsets") else None

            ep = await eventually(listed)
            assert ep["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
            # publishNotReadyAddresses: a pod not ready is listed ready; no ports on a headless Service.
            assert [a["ip"] for a in ep["subsets"][0]["addresses"]] == ["10.0.0.1"]
            assert "ports" not in ep["subsets"][0] and "notReadyAddresses" not in ep["subsets"][0]

    asyncio.run(main())


def test_hand_written_endpoints_of_a_selectorless_service_stay(tmp_path: Path) -> None:
    async def main() -> None:
        async with controller(tmp_path) as client:
            await _api(client, "services").create(
                {"metadata": {"name": "ext"}, "spec": {"ports": [{"port": 80}]}}
            )
            custom = {"addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80, "protocol": "TCP"}]}
            await _api(client, "endpoints").create({"metadata": {"name": "ext"}, "subsets": [custom]})
            # A Service with a selector next to it is synced after the selector-less one was looked at.
            await make_pod(client, "web-1", "10.0.0.1", True)
            await make_service(client)
            await eventually(lambda: _endpoints(client, "web"))
            ep = await _endpoints(client, "ext")
            assert ep is not None and ep["subsets"] == [custom]
            assert "endpoints.kubernetes.io/managed-by" not in (ep["metadata"].get("labels") or {})

    asyncio.run(main())


def _address(i: int) -> dict:
    return {"ip": f"10.1.{i // 250}.{i % 250}", "targetRef": {"uid": f"uid-{i}"}}


def test_repack_groups_addresses_by_ports_and_not_ready_trumps_ready() -> None:
    http = {"name": "http", "port": 8080, "protocol": "TCP"}
    dns = {"name": "dns", "port": 53, "protocol": "UDP"}
    a, b = _address(1), _address(2)
    subsets = [
        {"addresses": [a], "ports": [http]},
        {"addresses": [a], "ports": [dns]},
        {"addresses": [b], "ports": [http]},
        {"notReadyAddresses": [b], "ports": [http]},
    ]
    assert repack_subsets(subsets) == [
        {"addresses": [a], "ports": [dns]},
        {"addresses": [a], "notReadyAddresses": [b], "ports": [http]},
    ]


@pytest.mark.parametrize(("ready", "not_ready"), [(900, 300), (1200, 50)])
def test_truncation_keeps_1000_addresses_ready_first(ready: int, not_ready: int) -> None:
    subsets = [
        {
            "addresses": [_address(i) for i in range(ready)],
            "notReadyAddresses": [_address(10_000 + i) for i in range(not_ready)],
        }
    ]
    assert truncate_endpoints(subsets)
    kept_ready = len(subsets[0].get("addresses") or ())
    kept_not_ready = len(subsets[0].get("notReadyAddresses") or ())
    assert kept_ready + kept_not_ready == 1000
    assert kept_ready == min(ready, 1000)
    assert not truncate_endpoints([{"addresses": [_address(i) for i in range(1000)]}])


def test_over_capacity_endpoints_are_truncated_and_annotated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream keeps 1000 addresses; the limit is lowered to 2 so that three pods exceed it."""
    monkeypatch.setattr(endpoint_module, "MAX_CAPACITY", 2)

    async def main() -> None:
        async with controller(tmp_path) as client:
            for i in range(3):
                await make_pod(client, f"web-{i}", f"10.0.0.{i + 1}", True)
            await make_service(client)

            async def truncated() -> dict | None:
                ep = await _endpoints(client)
                annotations = (ep or {}).get("metadata", {}).get("annotations") or {}
                return ep if annotations.get("endpoints.kubernetes.io/over-capacity") == "truncated" else None

            ep = await eventually(truncated)
            assert len(ep["subsets"][0]["addresses"]) == 2
            await _api(client, "pods").delete("web-0", gracePeriodSeconds=0)

            async def within() -> dict | None:
                ep = await _endpoints(client)
                annotations = (ep or {}).get("metadata", {}).get("annotations") or {}
                return ep if "endpoints.kubernetes.io/over-capacity" not in annotations else None

            ep = await eventually(within)
            assert sorted(a["ip"] for a in ep["subsets"][0]["addresses"]) == ["10.0.0.2", "10.0.0.3"]

    asyncio.run(main())
